"""A test guest that asks a model through the raw `provider` bindings and reports what it saw.

Its input is JSON: `{"provider": NAME, "ops": [...]}`; each op is `{"op": "models"}`, `{"op": "chat",
"request": {...}}`, `{"op": "stream", "request": {...}}` (every envelope until the end),
`{"op": "cancel", "request": {...}}` (a stream cancelled once its first piece came), `{"op":
"streams", "n": N, "request": {...}}` (N streams started, none read), `{"op": "kind"}`, or, for
`make bench`, `{"op": "timed_chats", "n": N, "request": {...}}` (N chats in a row: the seconds each
took, on the guest's monotonic clock) and `{"op": "first_pieces", "n": N, "request": {...}}` (N
streams in a row, each read to its end: for each, the wall clock when its first piece was received
minus the number that piece's text is, in ns: the "clock" model's send time). A request is
`{"model", "messages": [{"role", "content", "tool_calls", "tool_call_id"}], "tools": [{"name",
"input_schema"}], "max_tokens"}`. The answer is one JSON result per op: `{"ok": ...}` or `{"err":
{"code", "message", "data"}}`.
"""

import json
import time

import wit_world
from componentize_py_types import Err
from wit_world.imports import inbox, provider, types


def _request(data):
    messages = [
        types.ChatMessage(
            role=types.Role[m.get("role", "user").upper()],
            content=m.get("content"),
            tool_calls=[types.ToolCall(c["id"], c["name"], c["arguments"]) for c in m.get("tool_calls", [])],
            tool_call_id=m.get("tool_call_id"),
        )
        for m in data.get("messages", [])
    ]
    tools = [
        types.Tool(t["name"], t.get("description"), json.dumps(t.get("input_schema", {"type": "object"})), None)
        for t in data.get("tools", [])
    ]
    return types.ChatRequest(
        model=data.get("model"),
        messages=messages,
        tools=tools,
        max_tokens=data.get("max_tokens"),
        temperature=data.get("temperature"),
        response_schema=data.get("response_schema"),
    )


def _call(c):
    return {"id": c.id, "name": c.name, "arguments": c.arguments}


def _result(r):
    return {
        "model": r.model,
        "content": r.content,
        "tool_calls": [_call(c) for c in r.tool_calls],
        "finish_reason": r.finish_reason.name.lower().replace("_", "-"),
        "usage": [r.usage.input_tokens, r.usage.output_tokens],
    }


def _error(e):
    return {"code": e.code.name.lower().replace("_", "-"), "message": e.message, "data": e.data}


def _stream(handle, request):
    stream_id = handle.chat_stream(request)
    seen = []
    while True:
        envelope = inbox.recv(20000)
        if envelope is None:
            return {"timed_out": seen}
        if envelope.id != stream_id:
            continue
        event = envelope.event
        if isinstance(event, types.Event_ChatDelta):
            piece = event.value
            seen.append({"content": piece.content, "tool_call": _call(piece.tool_call) if piece.tool_call else None})
        elif isinstance(event, types.Event_ChatEnd):
            return {"pieces": seen, "end": _result(event.value), "open": handle.is_open(stream_id)}
        elif isinstance(event, types.Event_Error):
            return {"pieces": seen, "error": _error(event.value)}


def _op(handle, op):
    kind = op["op"]
    if kind == "models":
        return handle.models()
    if kind == "kind":
        return [handle.kind(), handle.name()]
    if kind == "chat":
        return _result(handle.chat(_request(op["request"])))
    if kind == "stream":
        return _stream(handle, _request(op["request"]))
    if kind == "cancel":  # once its first piece came
        stream_id = handle.chat_stream(_request(op["request"]))
        first = inbox.recv(20000)
        if first is None or first.id != stream_id or not isinstance(first.event, types.Event_ChatDelta):
            return {"first": repr(first)}
        cancelled = handle.cancel(stream_id)
        return {"cancelled": cancelled, "open": handle.is_open(stream_id), "after": inbox.recv(200) is not None}
    if kind == "streams":  # start n streams, read nothing: their ids, or the error that refused one
        started = []
        for _ in range(op["n"]):
            try:
                started.append(handle.chat_stream(_request(op["request"])))
            except Err as e:
                return {"started": len(started), "refused": _error(e.value)}
        return {"started": len(started)}
    if kind == "timed_chats":
        request, took = _request(op["request"]), []
        for _ in range(op["n"]):
            started = time.perf_counter()
            handle.chat(request)
            took.append(time.perf_counter() - started)
        return took
    if kind == "first_pieces":
        request = _request(op["request"])
        return [_first_piece(handle, request) for _ in range(op["n"])]
    raise ValueError(f"unknown op {kind}")


def _first_piece(handle, request):
    """The wall clock when the stream's first piece was received minus the number it holds (ns)."""
    stream_id = handle.chat_stream(request)
    delay = None
    while True:
        envelope = inbox.recv(20000)
        now = time.time_ns()
        if envelope is None:
            raise RuntimeError("the stream sent nothing within 20 s")
        event = envelope.event
        if envelope.id != stream_id:
            continue
        if isinstance(event, types.Event_ChatDelta) and delay is None and event.value.content:
            delay = now - int(event.value.content)
        elif isinstance(event, types.Event_ChatEnd):
            return delay
        elif isinstance(event, types.Event_Error):
            raise RuntimeError(event.value.message)


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        data = json.loads(input)
        try:
            handle = provider.get(data["provider"])
        except Err as e:
            return json.dumps([{"err": _error(e.value)}])
        results = []
        for op in data["ops"]:
            try:
                results.append({"ok": _op(handle, op)})
            except Err as e:
                results.append({"err": _error(e.value)})
        return json.dumps(results)
