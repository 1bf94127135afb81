"""The watcher agent: reacts to changes of a resource while a slow tool call is in flight.

It subscribes to `demo://note` (`subscribe_resource`), starts the slow `sleep` tool (`start` returns at once with the
call's id), and then works from its inbox: every `progress` envelope of the call is reported, and at
some of them the agent writes a new note (standing in for another actor); every `resource-updated`
envelope of the subscription is a change it reacts to (here: counting the note's words). The loop
ends with the call's final envelope; leaving the `with` block unsubscribes.

Input (optional): notes to write, one per line.
"""

import wit_world
from agentlib import ToolingError, ToolResult, call, events, get, start, subscribe_resource
from componentize_py_types import Err
from wit_world.imports import log, types

NOTES = ["buy milk", "buy milk and eggs", "never mind, the shop is closed"]
QUIET_LIMIT = 10
"""Seconds without any envelope after which the agent gives up."""


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        notes = [line.strip() for line in input.splitlines() if line.strip()] or NOTES
        lines: list[str] = []
        try:
            with get("demo") as demo, subscribe_resource(demo, "demo://note") as note:
                slow = start(demo, "sleep", seconds=3, steps=6)
                lines.append(f"started sleep as call {slow.id[:8]}, watching demo://note as {note.id[:8]}")
                pending_notes = list(notes)
                inbox = events(QUIET_LIMIT, until=slow)
                for envelope in inbox:
                    match envelope:
                        case types.Envelope(slow.id, types.Event_Progress(types.Progress(done, total, message))):
                            lines.append(f"progress {done:g}/{total:g}: {message}")
                            if pending_notes and int(done) % 2 == 1:
                                call(demo, "set_note", text=pending_notes.pop(0))
                        case types.Envelope(slow.id, types.Event_ToolResult(result)):
                            lines.append(f"sleep finished: {ToolResult.of(result).text}")
                        case types.Envelope(slow.id, types.Event_Error(error)):
                            raise Err(f"sleep failed: {ToolingError(error)}")
                        case types.Envelope(note.id, types.Event_ResourceUpdated(content)):
                            words = call(demo, "word_count", text=content.content).structured["words"]
                            lines.append(f"note changed: {content.content!r} ({words} words)")
                            log.log(log.Level.INFO, f"reacted to a change of {content.uri}")
                if inbox.timed_out:
                    raise Err(f"nothing arrived for {QUIET_LIMIT} s")
        except ToolingError as error:
            raise Err(f"the demo tooling failed: {error}") from None
        return "\n".join(lines)
