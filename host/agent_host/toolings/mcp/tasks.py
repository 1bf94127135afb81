"""MCP Tasks as a client: the `io.modelcontextprotocol/tasks` extension (SEP-2663, 2026-07-28 era),
built on the SDK's `ClientExtension` hook, which hands `TasksExtension` every `tools/call` answered
with `resultType: "task"`; `Client.call_tool` returns what it resolves to.

Contract of one task: it is polled with `tasks/get` until terminal, waiting the server's latest
`pollIntervalMs` between polls (clamped to `MIN_POLL`..`MAX_POLL`, `DEFAULT_POLL` when absent); each
answer renews the call's request timeout (`request_clock`). The task's end is returned or raised
once: `completed` its `result`, `failed` its JSON-RPC `error` (as `MCPError`), `cancelled` by the
server `cancelled`, `input_required` `denied` (the host answers no input requests of tasks). A task
not terminal `ttlMs` after it was first seen is given up (`timeout`). Whenever polling ends without a
terminal status (the guest cancelled, a timeout, an error) `tasks/cancel` is sent once, shielded and
bounded. The 2025-11-25 era's experimental Tasks are `tasks_in_core`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from agent_host.errors import ErrorCode, ToolingError
from agent_host.toolings.mcp.errors import REQUEST_EXCEPTIONS
from agent_host.toolings.request_clock import renew_request_timeout

logger = logging.getLogger(__name__)

TASKS: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, advertised in the client's capabilities on every request."""

MIN_POLL: Final = 0.01
"""Seconds: the shortest wait between two polls, whatever the server suggests (no busy loop)."""

MAX_POLL: Final = 30.0
"""Seconds: the longest wait between two polls, so a bad hint cannot park a call for hours."""

DEFAULT_POLL: Final = 1.0
"""Seconds between polls when the server suggests no `pollIntervalMs`."""

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

Sleep = Callable[[float], Awaitable[None]]


class CreatedTask(types.Result):
    """`CreateTaskResult`: a `tools/call` result that is a task handle, not the tool's result."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskState(types.Result):
    """A `tasks/get` result: the task's status, with its `result` or `error` once terminal."""

    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"  # SEP-2663: the Mcp-Name header of tasks/* carries the task id


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class _Ack(types.Result):
    """The empty acknowledgement of `tasks/cancel`."""


def poll_interval(hint_ms: int | None) -> float:
    """Seconds to wait before the next poll, given the server's latest `pollIntervalMs`."""
    if hint_ms is None:
        return DEFAULT_POLL
    return min(max(hint_ms / 1000, MIN_POLL), MAX_POLL)


class TasksExtension(ClientExtension):
    """Finishes the tasks of one tooling's connection (see the module docstring)."""

    identifier = TASKS

    def __init__(self, tooling: str, cancel_within: float, sleep: Sleep = anyio.sleep) -> None:
        """`cancel_within`: seconds a `tasks/cancel` may take; `sleep` waits between polls."""
        self._tooling = tooling
        self._cancel_within = cancel_within
        self._sleep = sleep

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve),)

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        """Poll task `created` to its end; the tool's `CallToolResult`, or raise (module docstring).

        Raises `MCPError` (a failed task, or a failed `tasks/get`), pydantic's `ValidationError` (a
        reply that is not MCP), or `ToolingError` (`cancelled`, `denied`, `timeout`).
        """
        session, task_id = ctx.session, created.task_id
        seen = anyio.current_time()
        state: CreatedTask | TaskState = created
        finished = False
        try:
            while True:
                if isinstance(state, TaskState) and state.status in TERMINAL | {"input_required"}:
                    finished = state.status in TERMINAL
                    return self._outcome(state, ctx.tool_name)
                if state.ttl_ms is not None and anyio.current_time() - seen > state.ttl_ms / 1000:
                    raise ToolingError(
                        ErrorCode.TIMEOUT,
                        f"tooling {self._tooling!r}: the task of tool {ctx.tool_name!r} was not finished within "
                        f"its TTL of {state.ttl_ms} ms (the server may discard it then); it was cancelled",
                    )
                if state.status not in TERMINAL:
                    wait = poll_interval(state.poll_interval_ms)
                    renew_request_timeout(wait)
                    await self._sleep(wait)
                state = await session.send_request(GetTask(params=TaskParams(task_id=task_id)), TaskState)
                renew_request_timeout()
        finally:
            if not finished:
                await self._cancel(session, task_id)

    def _outcome(self, state: TaskState, tool: str) -> types.CallToolResult:
        where = f"tooling {self._tooling!r}: the task of tool {tool!r}"
        note = f": {state.status_message}" if state.status_message else ""
        if state.status == "completed":
            return types.CallToolResult.model_validate(state.result, by_name=False)
        if state.status == "failed":
            error = types.ErrorData.model_validate(
                state.error or {"code": INTERNAL_ERROR, "message": state.status_message or "the task failed"}
            )
            raise MCPError.from_error_data(error)
        if state.status == "cancelled":
            raise ToolingError(ErrorCode.CANCELLED, f"{where} was cancelled by the server{note}")
        kinds = sorted({str(request.get("method")) for request in (state.input_requests or {}).values()})
        raise ToolingError(
            ErrorCode.DENIED,
            f"{where} asks for input ({', '.join(kinds) or 'input_required'}), which the host does not give to "
            "tasks; it was cancelled",
        )

    async def _cancel(self, session: ClientSession, task_id: str) -> None:
        """Send `tasks/cancel` for `task_id`: shielded from the cancellation that ended the polling,
        bounded by `cancel_within`; a failure is logged, never raised."""
        with anyio.move_on_after(self._cancel_within, shield=True):
            try:
                await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), _Ack)
            except REQUEST_EXCEPTIONS as exc:
                logger.info("tooling %r: tasks/cancel of %s failed: %r", self._tooling, task_id, exc)
