"""A scripted test guest: runs the steps given as JSON input and returns every outcome as JSON.

Input: {"steps": [{"op": "get", "tooling": "demo", "as": "d"}, {"op": "list_tools", "h": "d"}, ...]}
Output: a JSON list with one entry per step: {"ok": value} or {"err": {"code", "message", "data"}}.
A step's "id"/"ids" may instead be given as {"ref": N} (also inside a list): the `ok` value of step N.
Written against wit/ alone (plus agentlib's nothing): one build serves every component test.

It is also the other test guests, so that one build and one compile serve them all (each build is
~20 s of CPU and each compile ~12 s): any input that is not a JSON object is the idle guest's
(milliseconds to wait in the inbox, then "idle done"), {"scenario": ...} the listener's
(`listener.py`, agentlib's inbox helpers), {"how": ...} the hoarder's (`hoarder.py`, host file
descriptors held).
"""

import json
import os
import sys
import time

import hoarder
import listener
import wit_world
from componentize_py_types import Err
from wit_world.imports import inbox, log, tooling, types


def _error(err: Err) -> dict:
    value = err.value
    if isinstance(value, types.Error):
        return {"code": value.code.name.lower().replace("_", "-"), "message": value.message, "data": value.data}
    return {"code": "?", "message": str(value), "data": None}


def _tool(tool: types.Tool) -> dict:
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": json.loads(tool.input_schema),
        "output_schema": json.loads(tool.output_schema) if tool.output_schema is not None else None,
    }


def _resource(info: types.ResourceInfo) -> dict:
    return {"uri": info.uri, "name": info.name, "description": info.description, "mime_type": info.mime_type}


def _content(content: types.ResourceContent) -> dict:
    return {"uri": content.uri, "mime_type": content.mime_type, "content": content.content}


def _envelope(envelope) -> dict | None:
    if envelope is None:
        return None
    event = envelope.event
    kind = type(event).__name__.removeprefix("Event_")
    value = event.value
    if isinstance(value, types.ToolResult):
        payload = {"name": value.name, "arguments": value.arguments, "value": json.loads(value.value)}
    elif isinstance(value, types.Error):
        payload = {"code": value.code.name.lower().replace("_", "-"), "message": value.message, "data": value.data}
    elif isinstance(value, types.Progress):
        payload = {"progress": value.progress, "total": value.total, "message": value.message}
    elif isinstance(value, types.ResourceContent):
        payload = _content(value)
    elif isinstance(value, types.ElicitationRequest):
        payload = {"message": value.message, "requested_schema": json.loads(value.requested_schema)}
    elif isinstance(value, list):
        payload = [_tool(v) if isinstance(v, types.Tool) else _resource(v) for v in value]
    else:
        payload = repr(value)
    return {"id": envelope.id, "kind": kind, "value": payload}


def idle(input: str) -> str:
    """The idle guest's part: wait `input` milliseconds in the inbox (none when empty), then answer."""
    if input.strip():
        inbox.recv(int(input))
    return "idle done"


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        if not input.lstrip().startswith("{"):
            return idle(input)
        script = json.loads(input)
        if "scenario" in script:
            return listener.run(input)
        if "how" in script:
            return hoarder.run(input)
        handles: dict[str, tooling.Tooling] = {}
        results: list[dict] = []

        def resolve(value):
            if isinstance(value, dict) and "ref" in value:
                return results[value["ref"]]["ok"]
            if isinstance(value, list):
                return [resolve(item) for item in value]
            return value

        def arg(step: dict, key: str):
            return resolve(step[key])

        def ids_of(value):
            """Call ids: one (a string, as `call` returns it) or a list of them (`call_each`)."""
            return [value] if isinstance(value, str) else list(value)

        for step in script["steps"]:
            op = step["op"]
            h = handles.get(step.get("h", ""))
            try:
                if op == "get":
                    handles[step["as"]] = tooling.get(step["tooling"])
                    value = True
                elif op == "drop":
                    handles.pop(step["h"]).__exit__(None, None, None)
                    value = True
                elif op == "kind":
                    value = h.kind()
                elif op == "name":
                    value = h.name()
                elif op == "list_tools":
                    value = [_tool(t) for t in h.list_tools()]
                elif op == "call_blocking":
                    r = h.call_tool_blocking(step["tool"], step.get("args", "{}"))
                    value = {"name": r.name, "arguments": r.arguments, "value": json.loads(r.value)}
                elif op == "list_resources":
                    value = [_resource(r) for r in h.list_resources()]
                elif op == "read_resource":
                    value = _content(h.read_resource(step["uri"]))
                elif op == "call":
                    value = h.call_tool(step["tool"], step.get("args", "{}"))
                elif op == "is_open":
                    value = h.is_open(arg(step, "id"))
                elif op == "cancel":
                    value = h.cancel(arg(step, "id"))
                elif op == "respond":
                    action = getattr(types.ElicitAction, step["action"].upper())
                    content = step.get("content")
                    h.respond(arg(step, "id"), action, json.dumps(content) if content is not None else None)
                    value = True
                elif op == "subscribe_resource":
                    value = h.subscribe_resource(step["uri"])
                elif op == "subscribe_resource_list":
                    value = h.subscribe_resource_list()
                elif op == "subscribe_tool_list":
                    value = h.subscribe_tool_list()
                elif op == "unsubscribe_resource":
                    value = h.unsubscribe_resource(arg(step, "id"))
                elif op == "unsubscribe_resource_list":
                    value = h.unsubscribe_resource_list(arg(step, "id"))
                elif op == "unsubscribe_tool_list":
                    value = h.unsubscribe_tool_list(arg(step, "id"))
                elif op == "call_each":
                    value = [h.call_tool(step["tool"], json.dumps(a)) for a in step["args_list"]]
                elif op == "flood":
                    # Start (or, with "blocking", make) `n` calls; count outcomes by code.
                    counts: dict[str, int] = {}
                    for _ in range(step["n"]):
                        try:
                            if step.get("blocking"):
                                h.call_tool_blocking(step["tool"], step.get("args", "{}"))
                            else:
                                h.call_tool(step["tool"], step.get("args", "{}"))
                            code = "ok"
                        except Err as err:
                            code = _error(err)["code"]
                        counts[code] = counts.get(code, 0) + 1
                    value = counts
                elif op == "timed":
                    # Seconds for `n` blocking calls (or, with "async", `n` calls started then drained).
                    started = time.perf_counter()
                    if step.get("async"):
                        ids = {h.call_tool(step["tool"], step.get("args", "{}")) for _ in range(step["n"])}
                        while ids:
                            envelope = inbox.recv(30000)
                            if envelope is None:
                                raise RuntimeError("no envelope within 30 s")
                            ids.discard(envelope.id)
                    else:
                        for _ in range(step["n"]):
                            h.call_tool_blocking(step["tool"], step.get("args", "{}"))
                    value = time.perf_counter() - started
                elif op == "timed_updates":
                    # Median seconds from starting a call of `tool` (which changes resource `uri`) to
                    # the update envelope of a subscription to `uri`, over `n` rounds.
                    sub = h.subscribe_resource(step["uri"])
                    delays = []
                    for i in range(step["n"]):
                        started = time.perf_counter()
                        call = h.call_tool(step["tool"], json.dumps({"text": f"note {i}"}))
                        seen = {"update": False, "call": False}
                        while not all(seen.values()):
                            envelope = inbox.recv(30000)
                            if envelope is None:
                                raise RuntimeError("no envelope within 30 s")
                            if envelope.id == sub and not seen["update"]:
                                delays.append(time.perf_counter() - started)
                                seen["update"] = True
                            elif envelope.id == call and not isinstance(envelope.event.value, types.Progress):
                                seen["call"] = True
                    h.unsubscribe_resource(sub)
                    value = sorted(delays)[len(delays) // 2]
                elif op == "timed_list_tools":
                    # Seconds for `n` calls of `list-tools` (a request that runs on the host's loop).
                    started = time.perf_counter()
                    for _ in range(step["n"]):
                        h.list_tools()
                    value = time.perf_counter() - started
                elif op == "timed_name":
                    # Seconds for `n` calls of the trivial import `tooling.name()`.
                    started = time.perf_counter()
                    for _ in range(step["n"]):
                        h.name()
                    value = time.perf_counter() - started
                elif op == "big_call":
                    text = "x" * step["bytes"]
                    r = h.call_tool_blocking(step["tool"], json.dumps({"text": text}))
                    value = len(r.value)
                elif op == "all_open":
                    value = [h.is_open(i) for i in ids_of(arg(step, "ids"))]
                elif op == "drain":
                    # Receive until every call in `ids` has its final envelope, `count` envelopes
                    # arrived, or a recv times out (`timeout_ms` each).
                    wanted = set(ids_of(arg(step, "ids"))) if "ids" in step else None
                    count = step.get("count")
                    value = []
                    while True:
                        envelope = _envelope(inbox.recv(step.get("timeout_ms", 10000)))
                        if envelope is None:
                            break
                        value.append(envelope)
                        if wanted is not None and envelope["kind"] in ("ToolResult", "Error"):
                            wanted.discard(envelope["id"])
                            if not wanted:
                                break
                        if count is not None and len(value) >= count:
                            break
                elif op == "until":
                    # Receive until an envelope whose value has `content` (or a recv times out).
                    value = []
                    while (envelope := _envelope(inbox.recv(step.get("timeout_ms", 10000)))) is not None:
                        value.append(envelope)
                        if isinstance(envelope["value"], dict) and envelope["value"].get("content") == step["content"]:
                            break
                elif op == "kinds":
                    # Receive until a recv times out (`timeout_ms`); only the kinds of what arrived.
                    value = []
                    while (envelope := inbox.recv(step.get("timeout_ms", 10000))) is not None:
                        value.append(type(envelope.event).__name__.removeprefix("Event_"))
                elif op == "pending":
                    value = []
                    while (envelope := inbox.try_recv()) is not None:
                        value.append(_envelope(envelope))
                elif op == "read_stdin":
                    value = sys.stdin.buffer.read(step.get("n", 1)).decode("latin-1")
                elif op == "sleep":
                    time.sleep(step["ms"] / 1000)
                    value = True
                elif op == "busy":
                    end = time.monotonic() + step["ms"] / 1000
                    while time.monotonic() < end:
                        pass
                    value = True
                elif op == "poll":
                    # Call a tool until structuredContent[key] == equals (or give up after timeout_ms).
                    end = time.monotonic() + step.get("timeout_ms", 10000) / 1000
                    while True:
                        r = h.call_tool_blocking(step["tool"], step.get("args", "{}"))
                        value = json.loads(r.value)["structuredContent"]
                        if value.get(step["key"]) == step["equals"] or time.monotonic() > end:
                            break
                        time.sleep(0.05)
                elif op == "recv":
                    value = _envelope(inbox.recv(step.get("timeout_ms")))
                elif op == "try_recv":
                    value = _envelope(inbox.try_recv())
                elif op == "log":
                    log.log(getattr(log.Level, step.get("level", "info").upper()), step["message"])
                    value = True
                elif op == "print":
                    print(step["text"])
                    value = True
                elif op == "write":
                    # Write `text` to stdout `times` times, adding no newline.
                    for _ in range(step.get("times", 1)):
                        sys.stdout.write(step["text"])
                    sys.stdout.flush()
                    value = True
                elif op == "eprint":
                    print(step["text"], file=sys.stderr)
                    value = True
                elif op == "fail":
                    raise Err(step["message"])
                elif op == "raise":
                    raise RuntimeError(step["message"])
                elif op == "loop":
                    while True:
                        pass
                elif op == "alloc":
                    hoard = []
                    while True:
                        hoard.append(bytearray(1 << 20))
                elif op == "recurse":

                    def down(n: int) -> int:
                        return down(n + 1) + 1

                    sys.setrecursionlimit(10**9)
                    value = down(0)
                elif op == "read_file":
                    with open(step["path"], "rb") as handle:
                        value = handle.read(200).decode("utf-8", "replace")
                elif op == "write_file":
                    with open(step["path"], "w") as handle:
                        value = handle.write(step.get("text", "x"))
                elif op == "env":
                    value = dict(os.environ)
                elif op == "socket":
                    import socket  # componentize-py offers no socket module; WASI grants no network

                    connection = socket.create_connection(("127.0.0.1", step["port"]), timeout=2)
                    connection.close()
                    value = "connected"
                elif op == "spew":
                    stream = sys.stderr if step.get("stream") == "stderr" else sys.stdout
                    line = "z" * 99 + "\n"
                    for _ in range(step["bytes"] // len(line)):
                        stream.write(line)
                    stream.flush()
                    value = True
                elif op == "symlink":
                    os.symlink(step["target"], step["path"])
                    value = os.readlink(step["path"])
                elif op == "listdir":
                    value = sorted(os.listdir(step["path"]))
                else:
                    raise ValueError(f"unknown op {op!r}")
                results.append({"ok": value})
            except Err as err:
                if op == "fail":
                    raise
                results.append({"err": _error(err)})
            except (OSError, MemoryError, RecursionError, ImportError) as exc:
                results.append({"err": {"code": "python", "message": f"{type(exc).__name__}: {exc}", "data": None}})
        return json.dumps(results)
