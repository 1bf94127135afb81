"""An HTTP MCP server with one tool, `headers`, returning the HTTP request headers it received.

`python -m tests.servers.headers` serves on a free 127.0.0.1 port and prints `listening on URL`.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer

from agent_host.demo_server import serve_http


def build() -> MCPServer:
    server = MCPServer("headers", log_level="WARNING")

    @server.tool()
    def headers(ctx: Context) -> dict[str, str]:
        """The request's HTTP headers."""
        return dict(ctx.headers or {})

    return server


if __name__ == "__main__":
    anyio.run(serve_http, build(), 0)
