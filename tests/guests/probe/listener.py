"""The probe's listener (it was the `listener` test guest): agentlib's inbox helpers, `events()`,
`start()`, subscriptions and `match`.

Input: {"scenario": "demo"} (tooling `demo`, the bundled server) or {"scenario": "lists"} (tooling
`t`, tests/servers/observed.py). Output: a JSON object of what the guest saw, for the test to check.
Every envelope is taken apart with `match` on the generated classes, with keyword patterns
(`Event_Error(value=...)`) and positional ones (`Event_ToolResult(result)`, `Envelope(id, event)`).
"""

import json

from agentlib import (
    ToolingError,
    ToolResult,
    call,
    events,
    get,
    is_final,
    start,
    subscribe_resource,
    subscribe_resource_list,
    subscribe_tool_list,
)
from componentize_py_types import Err
from wit_world.imports import types

WAIT = 10


def kind(envelope: types.Envelope) -> str:
    return type(envelope.event).__name__


def demo() -> dict:
    out: dict = {}
    with get("demo") as demo:
        with subscribe_resource(demo, "demo://note") as note:
            slow = start(demo, "sleep", seconds=1.5, steps=3)
            seen = []
            stream = events(WAIT, until=slow.id)
            for envelope in stream:
                match envelope:
                    case types.Envelope(id=slow.id, event=types.Event_Progress(types.Progress(progress=p, total=t))):
                        seen.append(f"progress {p:g}/{t:g}")
                        if p == 1:
                            call(demo, "set_note", text="written while sleeping")
                    case types.Envelope(id=note.id, event=types.Event_ResourceUpdated(value=content)):
                        seen.append(f"note: {content.content}")
                    case types.Envelope(slow.id, types.Event_ToolResult(result)):
                        seen.append(f"done: {ToolResult.of(result).text}")
                    case _:
                        seen.append(f"unexpected: {envelope!r}")
            out["watch"] = seen
            out["watch_ended"] = {"timed_out": stream.timed_out, "pending": sorted(stream.pending)}
            out["slow_open_after"] = slow.is_open()
        out["unsubscribed"] = {"closed": note.closed, "close_again": note.close(), "repr": repr(note)}
        call(demo, "set_note", text="nobody watches")
        quiet = events(0.5)
        out["after_unsubscribe"] = {"kinds": [kind(e) for e in quiet], "timed_out": quiet.timed_out}

        failing = start(demo, "fail", message="nope")
        for envelope in events(WAIT, until=failing.id):
            match envelope.event:
                case types.Event_Error(value=types.Error(code=types.ErrorCode.TOOL_FAILED, message=message) as error):
                    out["error"] = message
                    out["error_as_tooling_error"] = str(ToolingError(error))
                case other:
                    out["error"] = f"unexpected: {other!r}"
        refused: dict = {}
        try:
            start(demo, "no_such_tool")
        except ToolingError as raised:  # refused at once, before any envelope
            refused = {"code": raised.code, "is_err": isinstance(raised, Err), "str_starts": str(raised)[:11]}
        out["refused"] = refused

        echoes = [start(demo, "echo", text=word) for word in ("a", "b", "c")]
        answers: dict[str, str] = {}
        several = events(WAIT, until=echoes)  # `Call`s stand for their ids
        for envelope in several:
            if is_final(envelope) and isinstance(envelope.event, types.Event_ToolResult):
                answers[envelope.id] = ToolResult.of(envelope.event.value).text
        out["echoes"] = [answers.get(c.id) for c in echoes]
        out["echoes_ended"] = {"timed_out": several.timed_out, "pending": sorted(several.pending)}

        with start(demo, "sleep", seconds=30, steps=1) as long:
            waited = events(0.3, until=long)
            kinds = [kind(e) for e in waited]
            out["long"] = {
                "kinds": kinds,
                "timed_out": waited.timed_out,
                "pending_is_the_call": waited.pending == {long.id},
                "open_inside": long.is_open(),
                "repr": repr(long),
            }
        out["long"]["open_after_with"] = long.is_open()
        out["long"]["cancel_again"] = long.cancel()

        with subscribe_resource_list(demo) as resources, subscribe_tool_list(demo) as tools:
            out["lists"] = {"targets": [resources.target, tools.target], "distinct": resources.id != tools.id}
        out["lists"]["close_again"] = [resources.close(), tools.close()]

        drained = events(0)
        out["drained"] = {"kinds": [kind(e) for e in drained], "timed_out": drained.timed_out}
        out["nothing_to_wait_for"] = list(events(WAIT, until=[])) == []
    out["match_args"] = {
        cls.__name__: list(cls.__match_args__)
        for cls in (types.Envelope, types.Event_ToolResult, types.Event_Error, types.Event_Progress, types.Progress)
    }
    return out


def lists() -> dict:
    out: dict = {"resources": None, "tools": None}
    with (
        get("t") as t,
        subscribe_resource_list(t) as resources,
        subscribe_tool_list(t) as tools,
    ):
        call(t, "add_resource", name="c")
        call(t, "add_tool", name="late_tool")
        for envelope in events(WAIT):
            match envelope:
                case types.Envelope(resources.id, types.Event_ResourceListUpdated(infos)):
                    out["resources"] = [info.uri for info in infos]
                case types.Envelope(tools.id, types.Event_ToolListUpdated(value=listed)):
                    out["tools"] = [tool.name for tool in listed]
            if out["resources"] and out["tools"] and "late_tool" in out["tools"] and "obs://c" in out["resources"]:
                break
    return out


def orphan() -> dict:
    """A subscription and a call that outlive their tooling handle (dropping it ended them)."""
    with get("demo") as demo:
        note = subscribe_resource(demo, "demo://note")
        slow = start(demo, "sleep", seconds=30, steps=1)
    return {"close": note.close(), "is_open": slow.is_open(), "cancel": slow.cancel()}


def run(input: str) -> str:
    scenario = json.loads(input)["scenario"]
    return json.dumps({"demo": demo, "lists": lists, "orphan": orphan}[scenario]())
