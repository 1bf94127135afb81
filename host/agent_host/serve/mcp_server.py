"""The MCP server of `agent-host serve`: the catalog's tools and the proxied toolings' resources.

Built on the SDK's low-level `Server` (both protocol eras, as the SDK serves them). `tools/list` gives
the catalog's tools (`catalog.Catalog`); `tools/call` answers with the call's `Answer` as a
`CallToolResult` (a refusal or failure: `isError`, its text naming the code). While an agent runs,
each guest log line is a `notifications/message` (logger `agent-host.agent.NAME`) and a progress
report; a proxied tool's progress is relayed. A client's cancellation stops the guest, or the call
upstream; so does a 2025-11-25 client over HTTP that hangs up (closes the POST's stream) before its
answer (`hangups.unless_hung_up`), or ends its session (DELETE). With proxied toolings,
`resources/list` and `resources/read` pass through the grants and changes are relayed
(`relay.Relay`: `resources/subscribe`, `subscriptions/listen`); a refused resource request is a
JSON-RPC error coded by `ERROR_CODES`, its message starting with the WIT code.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any, Final

from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request

from agent_host._support import off_loop
from agent_host._version import __version__
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Progress, ResourceData
from agent_host.serve.answers import Answer
from agent_host.serve.catalog import Catalog
from agent_host.serve.clients import client_of_request
from agent_host.serve.draining import Draining
from agent_host.serve.hangups import unless_hung_up
from agent_host.serve.stdio_lines import BoundedLines, claimed_stdin

LOG_LEVELS: Final[Mapping[str, types.LoggingLevel]] = {
    "trace": "debug",
    "debug": "debug",
    "info": "info",
    "warn": "warning",
    "error": "error",
}
"""The MCP level of each WIT log level."""

ERROR_CODES: Final[Mapping[str, int]] = {
    "not-found": types.INVALID_PARAMS,
    "invalid-arguments": types.INVALID_PARAMS,
    "timeout": -32001,
    "denied": -32003,
    "limit-exceeded": -32004,
    "unavailable": -32005,
    "unauthorized": -32006,
}
"""The JSON-RPC error code of each WIT error code a resource request can fail with (a resource that does
not exist is -32602, invalid params, as SEP-2164 has it and the SDK's `MCPServer` answers; -32001 is
the SDK's timeout); any other is -32603 (internal error). The error's `data` is `{"uri": URI}` when
the request names one resource (`resources/read`, `resources/subscribe`)."""

HUNG_UP: Final = "the client hung up: the call was cancelled"
"""The answer of a call whose 2025-11-25 client hung up (nobody reads it: for the record)."""

CHANGES: Final = NotificationOptions(resources_changed=True, tools_changed=True)
"""What a 2025-11-25 client is told it will be notified of (with proxied toolings)."""


class _Server(Server[Any]):
    """The SDK's server, telling 2025-11-25 clients at the handshake whatever the transport that it
    notifies list changes (with proxied toolings; a 2026-07-28 client learns it from
    `subscriptions/listen` being served)."""

    notifies_changes = False

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        if notification_options is None and self.notifies_changes:
            notification_options = CHANGES
        return super().create_initialization_options(notification_options, experimental_capabilities, extensions)


def _refused(error: ToolingError, uri: str | None = None) -> MCPError:
    """The JSON-RPC error of a refused resource request; `data` is `{"uri": URI}` for the URI the
    request named (else the one the error's data names, if any); nothing else of the data is passed on."""
    named = uri if uri is not None else _uri_of(error.data)
    data = {"uri": named} if named is not None else None
    return MCPError(ERROR_CODES.get(error.code.value, types.INTERNAL_ERROR), str(error), data)


def _uri_of(data: str | None) -> str | None:
    try:
        parsed = json.loads(data) if data is not None else None
    except ValueError:
        return None
    uri = parsed.get("uri") if isinstance(parsed, dict) else None
    return uri if isinstance(uri, str) else None


def _contents(data: ResourceData) -> types.TextResourceContents | types.BlobResourceContents:
    if data.blob is not None:
        return types.BlobResourceContents(uri=data.uri, mime_type=data.mime_type, blob=data.blob)
    return types.TextResourceContents(uri=data.uri, mime_type=data.mime_type, text=data.text or "")


def build_server(catalog: Catalog) -> Server[Any]:
    """The MCP server offering `catalog` (enter `catalog.running()` around serving it)."""
    relay = catalog.relay

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if relay is not None:
            relay.seen(ctx)
        tools = [
            types.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=dict(tool.input_schema),
                output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
                annotations=types.ToolAnnotations.model_validate(tool.annotations) if tool.annotations else None,
            )
            for tool in await catalog.tools(client_of_request(ctx.request))
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

        async def on_progress(report: Progress) -> None:
            await ctx.session.report_progress(report.progress, report.total, report.message)

        request = ctx.request
        call = catalog.call(params.name, params.arguments or {}, on_log, on_progress, client=client_of_request(request))
        if isinstance(request, Request) and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            watched = await unless_hung_up(request, call)  # the SDK cancels a 2026 request itself
            answer = watched if watched is not None else Answer.failure(ErrorCode.CANCELLED, HUNG_UP)
        else:
            answer = await call
        return await off_loop.run(types.CallToolResult.model_validate, answer.wire(), size=answer.size)

    if relay is None:
        return _Server(
            "agent-host",
            version=__version__,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            get_tool_input_schema=catalog.input_schema,
        )
    proxy = catalog.proxy
    assert proxy is not None, "a relay comes with a proxy"

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        relay.seen(ctx)
        resources = [
            types.Resource(uri=spec.uri, name=spec.name, description=spec.description, mime_type=spec.mime_type)
            for spec in await proxy.resources(catalog.allowances.of(client_of_request(ctx.request)))
        ]
        return types.ListResourcesResult(resources=resources)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            data = await proxy.read(str(params.uri), catalog.allowances.of(client_of_request(ctx.request)))
        except ToolingError as exc:
            raise _refused(exc, str(params.uri)) from None
        return types.ReadResourceResult(contents=[_contents(data)])

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        try:
            await relay.subscribe(ctx, str(params.uri))
        except ToolingError as exc:
            raise _refused(exc, str(params.uri)) from None
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        await relay.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    async def listen(ctx: Any, params: types.SubscriptionsListenRequestParams) -> types.SubscriptionsListenResult:
        try:
            return await relay.listen(ctx, params)
        except ToolingError as exc:
            raise _refused(exc) from None

    server = _Server(
        "agent-host",
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=catalog.input_schema,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=listen,
    )
    server.notifies_changes = True
    return server


async def serve_stdio(server: Server[Any], catalog: Catalog) -> None:
    """Serve one client on this process's stdin/stdout until it closes stdin and every request it
    sent is answered (`draining.Draining`). A message (a line) over `[serve] max_body` is not read:
    it is answered with a JSON-RPC error (id null, code -32004, `limit-exceeded: ...`) and skipped
    (`stdio_lines.BoundedLines`)."""
    max_line = int(catalog.settings.max_body)
    with claimed_stdin() as fd:
        lines = BoundedLines(fd, max_line)
        stdin: Any = lines  # what the SDK's transport reads: an async iterator of lines, as its own file
        async with catalog.running(), stdio_server(stdin=stdin) as (read, write):
            refusal = types.JSONRPCError(
                jsonrpc="2.0",
                id=None,
                error=types.ErrorData(
                    code=ERROR_CODES["limit-exceeded"],
                    message=f"limit-exceeded: a message (one line) is larger than [serve] max_body ({max_line} "
                    "bytes); it was not read",
                ),
            )

            async def refuse() -> None:
                await write.send(SessionMessage(refusal))

            lines.refuse = refuse
            streams = Draining(read, write)
            await server.run(streams.reader, streams.writer, server.create_initialization_options())
