"""The MCP server of `agent-host serve`: one tool per offered agent, over stdio.

Built on the SDK's low-level `Server` (both protocol eras, as the SDK serves them). `tools/list`
gives each agent as a tool taking `{"input": string}`; `tools/call` runs it (`agents.AgentCalls`):
the answer is the result's text (and its `structuredContent` when it is a JSON object), a failure an
`isError` result whose text names it. While it runs, each guest log line is a `notifications/message`
(logger `agent-host.agent.NAME`) and a progress report when the client asked for progress. A
client's cancellation stops the guest.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Final

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning

from host import __version__
from host.serve.agents import AgentCalls

LOG_LEVELS: Final[Mapping[str, types.LoggingLevel]] = {
    "trace": "debug",
    "debug": "debug",
    "info": "info",
    "warn": "warning",
    "error": "error",
}
"""The MCP level of each WIT log level."""


def build_server(calls: AgentCalls) -> Server[Any]:
    """The MCP server offering `calls`' agents."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = [
            types.Tool(name=offer.name, description=offer.description, input_schema=dict(offer.input_schema))
            for offer in calls.offers.values()
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        lines = 0

        async def on_log(level: str, message: str) -> None:
            nonlocal lines
            lines += 1
            logger = f"agent-host.agent.{params.name}"
            with warnings.catch_warnings():  # the SDK deprecates logging from 2026-07-28; it sends where allowed
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                sending = ctx.session.send_log_message(LOG_LEVELS.get(level, "info"), message, logger, ctx.request_id)
            await sending
            await ctx.session.report_progress(lines, None, message)  # a no-op unless the client asked

        answer = await calls.call(params.name, params.arguments or {}, on_log)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)],
            structured_content=answer.structured,
            is_error=answer.failed,
        )

    return Server("agent-host", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin/stdout until it closes them."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
