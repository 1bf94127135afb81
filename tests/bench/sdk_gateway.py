"""`make bench`'s reference gateway: the raw MCP SDK re-exporting an upstream `echo`, as a user would write it.

An SDK `MCPServer` over streamable HTTP (served as the bundled demo server is) whose tool `echo`
calls `echo` of the upstream server at URL through one shared SDK `Client`: what a gateway costs with
nothing but the SDK (no policy, no audit), the floor a gateway in one Python process starts from.
Prints `listening on URL` first. Usage: `python -m tests.bench.sdk_gateway URL`.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from agent_host.demo_server import serve_http


async def _main(upstream_url: str) -> None:
    server = MCPServer("sdk-gateway", log_level="WARNING")
    async with Client(upstream_url, cache=None) as upstream:

        @server.tool()
        async def echo(text: str) -> Any:
            """`echo` of the upstream server."""
            result = await upstream.call_tool("echo", {"text": text})
            return result.content[0].text  # type: ignore[union-attr]

        await serve_http(server, 0)


if __name__ == "__main__":
    anyio.run(_main, sys.argv[1])
