"""A stdio MCP server with one tool, `traceparent`, answering the W3C trace context its request carried.

`python -m tests.servers.traced` serves over stdio: a call's `_meta.traceparent` (SEP-414: what the
client's SDK injects from its current span) is its text, or "" when it came without one.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer


def build() -> MCPServer:
    server = MCPServer("traced", log_level="WARNING")

    @server.tool()
    def traceparent(ctx: Context) -> str:
        """The traceparent of this request's `_meta`."""
        meta = ctx.request_context.meta or {}
        return str(meta.get("traceparent", ""))

    return server


if __name__ == "__main__":
    build().run("stdio")
