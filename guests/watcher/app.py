"""The watcher agent: reacts to changes of a resource while a slow tool call is in flight.

It subscribes to `demo://note`, starts the slow `sleep` tool with `call-tool` (which returns an id
at once), and then works from its inbox: every `progress` envelope of the call is reported, and at
some of them the agent writes a new note (standing in for another actor); every `resource-updated`
envelope of the subscription is a change it reacts to (here: counting the note's words). When the
call's final envelope arrives the agent unsubscribes and returns what happened.

Input (optional): notes to write, one per line.
"""

import json

import wit_world
from agentlib import call, failure
from componentize_py_types import Err
from wit_world.imports import inbox, log, tooling, types

NOTES = ["buy milk", "buy milk and eggs", "never mind, the shop is closed"]
RECV_TIMEOUT_MS = 10_000


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        notes = [line.strip() for line in input.splitlines() if line.strip()] or NOTES
        lines: list[str] = []
        try:
            with tooling.get("demo") as demo:
                subscription = demo.subscribe_resource("demo://note")
                slow = demo.call_tool("sleep", json.dumps({"seconds": 3, "steps": 6}))
                lines.append(f"started sleep as call {slow[:8]}, watching demo://note as {subscription[:8]}")
                pending_notes = list(notes)
                while demo.is_open(slow):
                    envelope = inbox.recv(RECV_TIMEOUT_MS)
                    if envelope is None:
                        raise Err(f"nothing arrived for {RECV_TIMEOUT_MS} ms")
                    event = envelope.event
                    if envelope.id == slow and isinstance(event, types.Event_Progress):
                        lines.append(f"progress {event.value.progress:g}/{event.value.total:g}: {event.value.message}")
                        if pending_notes and int(event.value.progress) % 2 == 1:
                            call(demo, "set_note", text=pending_notes.pop(0))
                    elif envelope.id == slow and isinstance(event, types.Event_ToolResult):
                        result = json.loads(event.value.value)
                        lines.append(f"sleep finished: {result['content'][0]['text']}")
                    elif envelope.id == slow and isinstance(event, types.Event_Error):
                        raise Err(f"sleep failed: {event.value.message}")
                    elif envelope.id == subscription and isinstance(event, types.Event_ResourceUpdated):
                        text = event.value.content
                        words = call(demo, "word_count", text=text)["structuredContent"]["words"]
                        lines.append(f"note changed: {text!r} ({words} words)")
                        log.log(log.Level.INFO, f"reacted to a change of {event.value.uri}")
                demo.unsubscribe_resource(subscription)
        except Err as err:
            if isinstance(err.value, types.Error):
                raise Err(f"the demo tooling failed: {failure(err)}") from None
            raise
        return "\n".join(lines)
