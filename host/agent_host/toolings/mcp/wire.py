"""The MCP SDK's types as `agent_host.model` values: paginated lists, tool specs, call results, contents.

Lists are read to the end (every page, in the server's order) but never past `MAX_PAGES`: a
server whose cursor never ends gets `protocol`. A call result keeps MCP's wire form (`content`,
`structuredContent` when present, `isError`). A read returns the content whose URI is the one
asked for (else the first); none at all is `protocol`. Legacy (2025-11-25) `resources/subscribe`
requests are sent directly, without the SDK's deprecation warning.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import mcp_types as types
from mcp import Client

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult, ResourceData, ResourceSpec, ToolSpec

MAX_PAGES: Final = 1000
"""Most pages read from one paginated list before the server is declared broken."""

Page = tuple[list[Any], str | None]
"""One page of a list: its items and the next cursor (None or empty at the end)."""


async def all_pages(tooling: str, method: str, fetch: Callable[[str | None], Awaitable[Page]]) -> list[Any]:
    """Every item of a paginated list; `fetch(cursor)` gives one page (`method` names it in errors)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page, cursor = await fetch(cursor)
        items.extend(page)
        if not cursor:
            return items
    raise ToolingError(
        ErrorCode.PROTOCOL, f"tooling {tooling!r}: {method} did not end after {MAX_PAGES} pages (cursor never ends)"
    )


async def list_tools(tooling: str, client: Client) -> list[ToolSpec]:
    """Every tool the server lists (all pages)."""

    async def page(cursor: str | None) -> Page:
        result = await client.list_tools(cursor=cursor)
        return list(result.tools), result.next_cursor

    return [tool_spec(tool) for tool in await all_pages(tooling, "tools/list", page)]


async def list_resources(tooling: str, client: Client) -> list[ResourceSpec]:
    """Every resource the server lists (all pages)."""

    async def page(cursor: str | None) -> Page:
        result = await client.list_resources(cursor=cursor)
        return list(result.resources), result.next_cursor

    return [
        ResourceSpec(uri=str(r.uri), name=r.name, description=r.description or None, mime_type=r.mime_type)
        for r in await all_pages(tooling, "resources/list", page)
    ]


def tool_spec(tool: types.Tool) -> ToolSpec:
    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    return ToolSpec(
        name=tool.name,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
        task_support=tool.execution.task_support if tool.execution is not None else None,
    )


def call_result(result: types.CallToolResult) -> CallResult:
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    structured = dumped["structuredContent"] if result.structured_content is not None else None
    return CallResult.from_content(dumped.get("content", []), structured=structured, is_error=bool(result.is_error))


def resource_data(tooling: str, uri: str, result: types.ReadResourceResult) -> ResourceData:
    if not result.contents:
        raise ToolingError(ErrorCode.PROTOCOL, f"tooling {tooling!r}: the server returned no content for {uri!r}")
    chosen = next((c for c in result.contents if str(c.uri) == uri), result.contents[0])
    if isinstance(chosen, types.TextResourceContents):
        return ResourceData(uri=str(chosen.uri), mime_type=chosen.mime_type, text=chosen.text)
    return ResourceData(uri=str(chosen.uri), mime_type=chosen.mime_type, blob=chosen.blob)


def legacy(action: str, uri: str) -> Callable[[Client], Awaitable[object]]:
    """A 2025-era resources/(un)subscribe request (`action`: "subscribe" or "unsubscribe")."""

    async def send(client: Client) -> object:
        request: types.SubscribeRequest | types.UnsubscribeRequest
        if action == "subscribe":
            request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
        else:
            request = types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
        return await client.session.send_request(request, types.EmptyResult)

    return send
