"""An MCP server on the SDK's low-level `Server` that runs a tool as an MCP Task (SEP-2663).

It offers the `io.modelcontextprotocol/tasks` extension (2026-07-28 era) and serves `tasks/get` and
`tasks/cancel` itself (SDK 2.3 has no Tasks runtime). A `tools/call` of `work` from a client that
declared the extension in the request's capabilities is answered with a task handle at once
(`resultType: "task"`); from any other client (the 2025-11-25 era) it runs inline, as before.
Run over stdio with `python -m tests.servers.tasking`, or over streamable HTTP with `--http PORT`.

Tools (`key` names one piece of work; everything is observable, nothing depends on time):
- `work(key, poll_ms=20, ttl_ms=3600000, end="completed")`: waits for `release(key)`, then ends as
  `end`: `completed` (text `done KEY`), `tool-error` (an `isError` result), `failed` (JSON-RPC -32603);
- `release(key)`; `started(key)` waits until `work(key)` runs; `cancelled(key)` waits until it was
  cancelled (by `tasks/cancel`, or by the cancellation of an inline call);
- `observe(key)`: JSON `{"tasks": created, "polls": tasks/get answered, "cancels": tasks/cancel received}`.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY, INTERNAL_ERROR, INVALID_PARAMS

TASKS: Final = "io.modelcontextprotocol/tasks"

_KEY: Final[dict[str, Any]] = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
TOOLS: Final = [
    types.Tool(
        name="work",
        description="Waits for release(key), then ends as `end`; a task when the client supports tasks.",
        input_schema={
            "type": "object",
            "properties": {
                "key": {"type": "string"},
                "poll_ms": {"type": "integer"},
                "ttl_ms": {"type": "integer"},
                "end": {"type": "string"},
            },
            "required": ["key"],
        },
    ),
    *(types.Tool(name=name, description=f"{name}(key)", input_schema=_KEY) for name in ("release", "started")),
    *(types.Tool(name=name, description=f"{name}(key)", input_schema=_KEY) for name in ("cancelled", "observe")),
]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


@dataclass
class _Task:
    task_id: str
    key: str
    poll_ms: int
    ttl_ms: int
    status: str = "working"
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_ms,
        }
        if self.result is not None:
            body["result"] = self.result
        if self.error is not None:
            body["error"] = self.error
        return body


class TaskIdParams(types.RequestParams):
    task_id: str


class State:
    """Everything the server remembers, per key."""

    def __init__(self) -> None:
        self.released: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.started: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.cancelled: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.counts: defaultdict[str, dict[str, int]] = defaultdict(lambda: {"tasks": 0, "polls": 0, "cancels": 0})
        self.tasks: dict[str, _Task] = {}

    async def work(self, key: str, end: str) -> types.CallToolResult:
        """The work itself; raises `MCPError` when `end` is `failed`."""
        self.started[key].set()
        try:
            await self.released[key].wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled[key].set()
            raise
        if end == "failed":
            raise MCPError(INTERNAL_ERROR, f"work {key} failed")
        return _text(f"done {key}", error=end == "tool-error")

    async def run_task(self, task: _Task, end: str) -> None:
        with task.scope:
            try:
                result = await self.work(task.key, end)
                task.status, task.result = "completed", result.model_dump(by_alias=True, mode="json", exclude_none=True)
            except MCPError as exc:
                task.status, task.error = "failed", exc.error.model_dump(by_alias=True, mode="json", exclude_none=True)
        if task.scope.cancelled_caught:
            task.status = "cancelled"
        task.updated = _now()


def _declares_tasks(ctx: Any) -> bool:
    meta = (ctx.params or {}).get("_meta") or {}
    capabilities = meta.get(CLIENT_CAPABILITIES_META_KEY) or {}
    return TASKS in (capabilities.get("extensions") or {})


def build(tg: TaskGroup, state: State | None = None) -> Server[Any]:
    """The server; task work runs in `tg`."""
    st = state if state is not None else State()

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        arguments = params.arguments or {}
        key = str(arguments.get("key", ""))
        if params.name == "work":
            end = str(arguments.get("end", "completed"))
            if not _declares_tasks(ctx):
                return await st.work(key, end)
            task = _Task(
                f"task-{key}-{len(st.tasks)}",
                key,
                int(arguments.get("poll_ms", 20)),
                int(arguments.get("ttl_ms", 3600000)),
            )
            st.tasks[task.task_id] = task
            st.counts[key]["tasks"] += 1
            tg.start_soon(st.run_task, task, end)
            return {"resultType": "task", **task.wire()}
        if params.name == "release":
            st.released[key].set()
            return _text("released")
        if params.name == "started":
            await st.started[key].wait()
            return _text("started")
        if params.name == "cancelled":
            await st.cancelled[key].wait()
            return _text("cancelled")
        if params.name == "observe":
            return _text(json.dumps(st.counts[key]))
        return _text(f"unknown tool {params.name}", error=True)

    def _task(task_id: str) -> _Task:
        task = st.tasks.get(task_id)
        if task is None:
            raise MCPError(INVALID_PARAMS, f"Failed to retrieve task: no task {task_id}")
        return task

    async def get_task(ctx: Any, params: TaskIdParams) -> dict[str, Any]:
        task = _task(params.task_id)
        st.counts[task.key]["polls"] += 1
        return task.wire()

    async def cancel_task(ctx: Any, params: TaskIdParams) -> dict[str, Any]:
        task = _task(params.task_id)
        st.counts[task.key]["cancels"] += 1
        task.scope.cancel()
        return {}

    server: Server[Any] = Server("tasking", on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_request_handler("tasks/get", TaskIdParams, get_task)
    server.add_request_handler("tasks/cancel", TaskIdParams, cancel_task)
    server.extensions[TASKS] = {}
    return server


async def _stdio() -> None:
    async with anyio.create_task_group() as tg:
        server = build(tg)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def _http(port: int) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)  # before the URL is printed: a client may connect at once
    async with anyio.create_task_group() as tg:
        app = build(tg).streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        sys.stdout.write(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp\n")
        sys.stdout.flush()
        await uvicorn.Server(config).serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (0: free)")
    args = parser.parse_args(argv)
    if args.http is None:
        anyio.run(_stdio)
    else:
        anyio.run(_http, args.http)


if __name__ == "__main__":
    main()
