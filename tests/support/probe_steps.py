"""Typed builders of the probe guest's steps (tests/guests/probe/app.py), so a test reads as what
its guest does: `script(get("demo", as_="d"), call_blocking("d", "echo", text="x"))`.

Each function returns the step's dict exactly as the probe reads it (a test may still mix in raw
dicts); `script(*steps)` is the guest's JSON input. The probe answers a JSON list with one entry per
step, `{"ok": value}` or `{"err": {"code", "message", "data"}}`: each docstring names the `ok` value.
`h` is the name a handle was given by `get(..., as_=h)`. Where a step takes a call or subscription
id, `ref(n)` stands for the `ok` value of step `n` of the same script.

Tool arguments are keyword arguments, JSON-encoded here by `json.dumps` with its defaults (so
non-ASCII text is escaped: `call("d", "add", a=2, b=3.5)`), or one positional JSON text sent as is,
valid or not (`call_blocking("d", "echo", "{text: 1}")`); with neither, the step has no `args` and
the probe sends `{}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

Step = dict[str, Any]
"""One step of a probe script."""
Ref = dict[str, int]
"""`{"ref": n}`: the `ok` value of step `n`, resolved by the probe when it runs the step."""
Id = str | Ref
"""A call or subscription id, or a reference to the step that returned it."""


def script(*steps: Step) -> str:
    """The probe's JSON input running `steps` in order."""
    return json.dumps({"steps": list(steps)})


def ref(step: int) -> Ref:
    """The `ok` value of step number `step` (from 0) of the same script, e.g. the id a `call` returned."""
    return {"ref": step}


def _with_args(step: Step, args: Mapping[str, Any] | str | None) -> Step:
    """`step` with `args` as its JSON text: a string as is, a mapping encoded; none: no `args` key."""
    if isinstance(args, str):
        step["args"] = args
    elif args is not None:
        step["args"] = json.dumps(dict(args))
    return step


def _tool_args(raw: str | None, args: dict[str, Any]) -> Mapping[str, Any] | str | None:
    if raw is not None and args:
        raise TypeError("give the tool's arguments as JSON text or as keywords, not both")
    return raw if raw is not None else (args or None)


def _ids(ids: Id | Sequence[Id]) -> Id | list[Id]:
    """One id or reference as it is; a sequence of them as a list."""
    return ids if isinstance(ids, str | dict) else list(ids)


# Handles


def get(tooling: str, *, as_: str) -> Step:
    """`tooling.get(tooling)`, the handle kept under the name `as_`; ok: true."""
    return {"op": "get", "tooling": tooling, "as": as_}


def drop(h: str) -> Step:
    """Drop handle `h` (the guest releases it); ok: true."""
    return {"op": "drop", "h": h}


def kind(h: str) -> Step:
    """`h.kind()`; ok: the tooling's kind ("mcp", "python", "mock")."""
    return {"op": "kind", "h": h}


def name(h: str) -> Step:
    """`h.name()`; ok: the tooling's configured name."""
    return {"op": "name", "h": h}


# Tools and resources


def list_tools(h: str) -> Step:
    """`h.list-tools()`, every page; ok: a list of {name, description, input_schema, output_schema},
    the schemas parsed."""
    return {"op": "list_tools", "h": h}


def call_blocking(h: str, tool: str, raw: str | None = None, /, **args: Any) -> Step:
    """`h.call-tool-blocking(tool, args)`, waiting in the host for the result; ok: {name, arguments,
    value}, `value` the MCP result parsed (content, structuredContent, isError)."""
    return _with_args({"op": "call_blocking", "h": h, "tool": tool}, _tool_args(raw, args))


def call(h: str, tool: str, raw: str | None = None, /, **args: Any) -> Step:
    """`h.call-tool(tool, args)`, started without waiting (its envelopes arrive in the inbox); ok: the
    call's id."""
    return _with_args({"op": "call", "h": h, "tool": tool}, _tool_args(raw, args))


def call_each(h: str, tool: str, args_list: Sequence[Mapping[str, Any]]) -> Step:
    """One `call-tool` of `tool` per arguments object of `args_list`, all started; ok: their ids."""
    return {"op": "call_each", "h": h, "tool": tool, "args_list": list(args_list)}


def list_resources(h: str) -> Step:
    """`h.list-resources()`, every page; ok: a list of {uri, name, description, mime_type}."""
    return {"op": "list_resources", "h": h}


def read_resource(h: str, uri: str) -> Step:
    """`h.read-resource(uri)`; ok: {uri, mime_type, content} (binary content in base64)."""
    return {"op": "read_resource", "h": h, "uri": uri}


# Calls in flight


def is_open(h: str, call_id: Id) -> Step:
    """`h.is-open(id)`; ok: whether the call is open (its final envelope not yet received, not cancelled)."""
    return {"op": "is_open", "h": h, "id": call_id}


def all_open(h: str, ids: Id | Sequence[Id]) -> Step:
    """`h.is-open` of each of `ids` (a list, or a reference to a step that returned one); ok: a list
    of booleans."""
    return {"op": "all_open", "h": h, "ids": _ids(ids)}


def cancel(h: str, call_id: Id) -> Step:
    """`h.cancel(id)`; ok: whether the call was open."""
    return {"op": "cancel", "h": h, "id": call_id}


def respond(
    h: str, call_id: Id, action: Literal["accept", "decline", "cancel"], content: Mapping[str, Any] | None = None
) -> Step:
    """`h.respond(id, action, content)`: answer the elicitation request of call `id`, `content`
    JSON-encoded by the probe; ok: true."""
    step: Step = {"op": "respond", "h": h, "id": call_id, "action": action}
    if content is not None:
        step["content"] = dict(content)
    return step


# Subscriptions


def subscribe_resource(h: str, uri: str) -> Step:
    """`h.subscribe-resource(uri)`; ok: the subscription's id (its updates arrive in the inbox)."""
    return {"op": "subscribe_resource", "h": h, "uri": uri}


def subscribe_resource_list(h: str) -> Step:
    """`h.subscribe-resource-list()`; ok: the subscription's id."""
    return {"op": "subscribe_resource_list", "h": h}


def subscribe_tool_list(h: str) -> Step:
    """`h.subscribe-tool-list()`; ok: the subscription's id."""
    return {"op": "subscribe_tool_list", "h": h}


def unsubscribe_resource(h: str, sub_id: Id) -> Step:
    """`h.unsubscribe-resource(id)`; ok: whether the subscription was active."""
    return {"op": "unsubscribe_resource", "h": h, "id": sub_id}


def unsubscribe_resource_list(h: str, sub_id: Id) -> Step:
    """`h.unsubscribe-resource-list(id)`; ok: whether the subscription was active."""
    return {"op": "unsubscribe_resource_list", "h": h, "id": sub_id}


def unsubscribe_tool_list(h: str, sub_id: Id) -> Step:
    """`h.unsubscribe-tool-list(id)`; ok: whether the subscription was active."""
    return {"op": "unsubscribe_tool_list", "h": h, "id": sub_id}


# The inbox


def drain(ids: Id | Sequence[Id] | None = None, *, count: int | None = None, timeout_ms: int | None = None) -> Step:
    """Receive envelopes until every call of `ids` has its final one (a result or an error), `count`
    arrived, or one receive waits `timeout_ms` (10 s by default) in vain; ok: the envelopes, each
    {id, kind, value}."""
    step: Step = {"op": "drain"}
    if ids is not None:
        step["ids"] = _ids(ids)
    if count is not None:
        step["count"] = count
    if timeout_ms is not None:
        step["timeout_ms"] = timeout_ms
    return step


def until(content: str, *, timeout_ms: int | None = None) -> Step:
    """Receive envelopes until one whose value's `content` is `content`, or one receive waits
    `timeout_ms` (10 s by default) in vain; ok: the envelopes, each {id, kind, value}."""
    step: Step = {"op": "until", "content": content}
    if timeout_ms is not None:
        step["timeout_ms"] = timeout_ms
    return step


def kinds(*, timeout_ms: int | None = None) -> Step:
    """Receive until one receive waits `timeout_ms` (10 s by default) in vain; ok: the kinds of the
    envelopes that arrived ("ToolResult", "Progress", ...)."""
    return {"op": "kinds"} if timeout_ms is None else {"op": "kinds", "timeout_ms": timeout_ms}


def recv(timeout_ms: int | None = None) -> Step:
    """`inbox.recv(timeout_ms)` (no timeout: wait for ever); ok: the envelope {id, kind, value}, or
    null when none came in time."""
    return {"op": "recv"} if timeout_ms is None else {"op": "recv", "timeout_ms": timeout_ms}


def try_recv() -> Step:
    """`inbox.try-recv()`; ok: the envelope waiting, or null."""
    return {"op": "try_recv"}


def pending() -> Step:
    """`inbox.try-recv()` until it is empty; ok: the envelopes that were waiting."""
    return {"op": "pending"}


def poll(
    h: str,
    tool: str,
    *,
    key: str,
    equals: Any,
    timeout_ms: int | None = None,
    args: Mapping[str, Any] | str | None = None,
) -> Step:
    """Call `tool` (blocking) every 50 ms until its structuredContent[key] equals `equals`, or for
    `timeout_ms` (10 s by default); ok: the last structuredContent."""
    step = _with_args({"op": "poll", "h": h, "tool": tool}, args)
    step.update(key=key, equals=equals)
    if timeout_ms is not None:
        step["timeout_ms"] = timeout_ms
    return step


# Many calls at once, and timings


def flood(h: str, tool: str, n: int, *, blocking: bool = False, args: Mapping[str, Any] | str | None = None) -> Step:
    """Start (or, `blocking`, make) `n` calls of `tool`; ok: how many ended with each code ("ok",
    "limit-exceeded", ...)."""
    step = _with_args({"op": "flood", "h": h, "tool": tool}, args)
    if blocking:
        step["blocking"] = True
    step["n"] = n
    return step


def timed(h: str, tool: str, n: int, *, async_: bool = False, args: Mapping[str, Any] | str | None = None) -> Step:
    """`n` blocking calls of `tool` (or, `async_`, `n` calls started and then drained); ok: seconds taken."""
    step = _with_args({"op": "timed", "h": h, "tool": tool}, args)
    step["n"] = n
    if async_:
        step["async"] = True
    return step


def timed_updates(h: str, tool: str, uri: str, n: int) -> Step:
    """Subscribe to `uri`, then `n` times call `tool` (which changes it, with {"text": ...}) and wait
    for both the update and the result; ok: the median seconds from a call's start to its update."""
    return {"op": "timed_updates", "h": h, "tool": tool, "uri": uri, "n": n}


def timed_list_tools(h: str, n: int) -> Step:
    """`n` calls of `h.list-tools()`; ok: seconds taken."""
    return {"op": "timed_list_tools", "h": h, "n": n}


def timed_name(h: str, n: int) -> Step:
    """`n` calls of the trivial import `h.name()`; ok: seconds taken."""
    return {"op": "timed_name", "h": h, "n": n}


def big_call(h: str, tool: str, nbytes: int) -> Step:
    """Call `tool` (blocking) with {"text": nbytes times "x"}; ok: the length of the result's JSON."""
    return {"op": "big_call", "h": h, "tool": tool, "bytes": nbytes}


# The guest itself: output, time, failures, WASI


def log(message: str, level: str | None = None) -> Step:
    """`log.log(level, message)` (level "info" when not given); ok: true."""
    return {"op": "log", "message": message} if level is None else {"op": "log", "level": level, "message": message}


def print_(text: str) -> Step:
    """`print(text)` to stdout; ok: true."""
    return {"op": "print", "text": text}


def eprint(text: str) -> Step:
    """`print(text)` to stderr; ok: true."""
    return {"op": "eprint", "text": text}


def write(text: str, times: int | None = None) -> Step:
    """Write `text` to stdout `times` times (once when not given) with no newline, then flush; ok: true."""
    return {"op": "write", "text": text} if times is None else {"op": "write", "text": text, "times": times}


def spew(nbytes: int, stream: Literal["stdout", "stderr"] | None = None) -> Step:
    """Write `nbytes` bytes of 100-byte lines to stdout (or `stream`); ok: true."""
    step: Step = {"op": "spew", "bytes": nbytes}
    if stream is not None:
        step["stream"] = stream
    return step


def sleep(ms: int) -> Step:
    """`time.sleep` for `ms` milliseconds (a wait in WASI, not CPU time); ok: true."""
    return {"op": "sleep", "ms": ms}


def busy(ms: int) -> Step:
    """Compute for `ms` milliseconds (CPU time); ok: true."""
    return {"op": "busy", "ms": ms}


def read_stdin(n: int | None = None) -> Step:
    """Read up to `n` bytes (1 when not given) of stdin; ok: them, as text."""
    return {"op": "read_stdin"} if n is None else {"op": "read_stdin", "n": n}


def fail(message: str) -> Step:
    """End the run with `run` returning err(message): the run's outcome, not a step result."""
    return {"op": "fail", "message": message}


def raise_(message: str) -> Step:
    """Raise RuntimeError(message) out of `run`: the guest fails, with no step result."""
    return {"op": "raise", "message": message}


def loop() -> Step:
    """Loop for ever (until a limit or a stop ends the guest)."""
    return {"op": "loop"}


def alloc() -> Step:
    """Allocate 1 MiB after another for ever (until the memory limit ends the guest)."""
    return {"op": "alloc"}


def recurse() -> Step:
    """Recurse without end, Python's recursion limit lifted (until the stack is exhausted)."""
    return {"op": "recurse"}


def read_file(path: str) -> Step:
    """Open `path` in the guest's file system; ok: its first 200 bytes, as text."""
    return {"op": "read_file", "path": path}


def write_file(path: str, text: str | None = None) -> Step:
    """Write `text` ("x" when not given) to `path`; ok: the characters written."""
    return {"op": "write_file", "path": path} if text is None else {"op": "write_file", "path": path, "text": text}


def listdir(path: str) -> Step:
    """`os.listdir(path)`; ok: the names, sorted."""
    return {"op": "listdir", "path": path}


def symlink(target: str, path: str) -> Step:
    """`os.symlink(target, path)`; ok: `os.readlink(path)`."""
    return {"op": "symlink", "target": target, "path": path}


def env() -> Step:
    """ok: the guest's environment variables."""
    return {"op": "env"}


def socket(port: int) -> Step:
    """Connect to 127.0.0.1:`port`; ok: "connected" (a guest has no network: it should fail)."""
    return {"op": "socket", "port": port}
