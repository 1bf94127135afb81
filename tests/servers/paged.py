"""A stdio MCP server whose tools and resources come in pages of PAGE_SIZE (cursor = offset).

`python -m tests.servers.paged`: TOOLS tools `tool_0..` (each echoes its index) and RESOURCES
text resources `paged://N`, so a client that reads only the first page sees too few.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mcp.server.mcpserver import MCPServer
from mcp_types import ListResourcesResult, ListToolsResult, PaginatedRequestParams

PAGE_SIZE: Final = 4
TOOLS: Final = 11
RESOURCES: Final = 9


class PagedServer(MCPServer[Any]):
    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        tools = (await self.list_tools())[start : start + PAGE_SIZE]
        following = start + PAGE_SIZE
        return ListToolsResult(tools=tools, next_cursor=str(following) if following < TOOLS else None)

    async def _handle_list_resources(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        resources = (await self.list_resources())[start : start + PAGE_SIZE]
        following = start + PAGE_SIZE
        return ListResourcesResult(resources=resources, next_cursor=str(following) if following < RESOURCES else None)


def build() -> PagedServer:
    server = PagedServer("paged", log_level="WARNING")
    for index in range(TOOLS):
        server.add_tool(_constant(f"tool {index}"), name=f"tool_{index}", description=f"Tool number {index}")
    for index in range(RESOURCES):
        server.resource(f"paged://{index}", name=f"r{index}", mime_type="text/plain")(_constant(f"resource {index}"))
    return server


def _constant(text: str) -> Callable[[], str]:
    def value() -> str:
        return text

    return value


if __name__ == "__main__":
    build().run("stdio")
