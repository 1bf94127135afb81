"""MCP Tasks of the 2025-11-25 era (experimental core): a `tools/call` with a `task` parameter,
answered by a `CreateTaskResult`, polled with `tasks/get`, its result fetched with `tasks/result`.

`call_as_task` sends it through the session's public `send_request` (stamping, headers, timeouts);
the connection's streams (`stream.TaskCalls`) let SDK 2.3's `CallToolResult` check pass the answer,
validated here as a `CreateTaskResult`. Polling waits the task's `pollInterval` (clamped as in
`tasks`), renewing the request timeout; at `input_required` the host fetches `tasks/result` at once,
through which the server sends its requests (answered by policy, see `requests`). The outcome is
returned or raised once: `completed` and `failed` as `tasks/result` gives them, `cancelled` by the
server `cancelled`; a task past its `ttl` is given up (`timeout`). A task not terminal when the call
ends otherwise is cancelled (`tasks/cancel`, once).
"""

from __future__ import annotations

import logging
from typing import Final

import anyio
import mcp_types as types
from mcp.client.session import ClientSession

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import JsonObject
from agent_host.toolings.mcp.errors import REQUEST_EXCEPTIONS
from agent_host.toolings.mcp.tasks import poll_interval
from agent_host.toolings.request_clock import renew_request_timeout

logger = logging.getLogger(__name__)

TASK_TTL_MS: Final = 3_600_000
"""The `ttl` the host asks for a task (an hour); the server may grant less."""

WAIT_FOR_RESULT: Final = frozenset({"completed", "failed", "input_required"})
"""Statuses after which the host fetches `tasks/result` (it blocks until the task's end)."""


async def call_as_task(
    session: ClientSession, tooling: str, name: str, arguments: JsonObject, *, cancel_within: float
) -> types.CallToolResult:
    """Run tool `name` as a task on a 2025-11-25 connection (see the module docstring).

    Raises `MCPError` (the server refused, or the task failed), pydantic's `ValidationError` (a
    reply that is not MCP), or `ToolingError` (`cancelled`, `timeout`)."""
    params = types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=TASK_TTL_MS))
    task = (await session.send_request(types.CallToolRequest(params=params), types.CreateTaskResult)).task
    seen = anyio.current_time()
    finished = False
    try:
        status, message, ttl, hint = task.status, task.status_message, task.ttl, task.poll_interval
        while status not in WAIT_FOR_RESULT:
            where = f"tooling {tooling!r}: the task of tool {name!r}"
            if status == "cancelled":
                finished = True
                raise ToolingError(ErrorCode.CANCELLED, f"{where} was cancelled by the server: {message or ''}")
            if ttl is not None and anyio.current_time() - seen > ttl / 1000:
                raise ToolingError(
                    ErrorCode.TIMEOUT, f"{where} was not finished within its TTL of {ttl} ms; it was cancelled"
                )
            wait = poll_interval(hint)
            renew_request_timeout(wait)
            await anyio.sleep(wait)
            state = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)), types.GetTaskResult
            )
            renew_request_timeout()
            status, message, ttl, hint = state.status, state.status_message, state.ttl, state.poll_interval
        result = await session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id)),
            types.CallToolResult,
        )
        finished = True
        return result
    finally:
        if not finished:
            await _cancel(session, tooling, task.task_id, cancel_within)


async def _cancel(session: ClientSession, tooling: str, task_id: str, within: float) -> None:
    """`tasks/cancel`, shielded from the cancellation that ended the call and bounded by `within`; a
    failure is logged, never raised."""
    with anyio.move_on_after(within, shield=True):
        try:
            request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
            await session.send_request(request, types.CancelTaskResult)
        except REQUEST_EXCEPTIONS as exc:
            logger.info("tooling %r: tasks/cancel of %s failed: %r", tooling, task_id, exc)
