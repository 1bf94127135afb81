"""The watcher agent: reacts to changes of a resource while a slow tool call is in flight.

It subscribes to `demo://note`, starts the slow `sleep` tool (`start` returns at once with the
call's id), and then works from its inbox (`listen`: typed events): every `Progress` of the call is
reported, and at some of them the agent writes a new note (standing in for another actor); every
`ResourceUpdated` of the subscription is a change it reacts to (here: counting the note's words).
The loop ends with the call's final event; leaving the `with` block unsubscribes.

Input (optional): notes to write, one per line.
"""

import logging

from agentlib import Err, Failed, Progress, ResourceUpdated, Result, ToolingError, agent, listen, tooling

NOTES = ["buy milk", "buy milk and eggs", "never mind, the shop is closed"]
QUIET_LIMIT = 10
"""Seconds without any event after which the agent gives up."""

demo = tooling("demo")


@agent
def run(input: str) -> str:
    notes = [line.strip() for line in input.splitlines() if line.strip()] or NOTES
    lines: list[str] = []
    try:
        with demo.subscribe("demo://note") as note:
            slow = demo.start("sleep", seconds=3, steps=6)
            lines.append(f"started sleep as call {slow.id[:8]}, watching demo://note as {note.id[:8]}")
            pending_notes = list(notes)
            inbox = listen(QUIET_LIMIT, until=slow)
            for event in inbox:
                match event:
                    case Progress(id=slow.id, progress=done, total=total, message=message):
                        lines.append(f"progress {done:g}/{total:g}: {message}")
                        if pending_notes and int(done) % 2 == 1:
                            demo.set_note(text=pending_notes.pop(0))
                    case Result(id=slow.id, result=result):
                        lines.append(f"sleep finished: {result.text}")
                    case Failed(id=slow.id, error=error):
                        raise Err(f"sleep failed: {error}")
                    case ResourceUpdated(id=note.id, resource=resource):
                        words = demo.word_count(text=resource.text)["words"]
                        lines.append(f"note changed: {resource.text!r} ({words} words)")
                        logging.info(f"reacted to a change of {resource.uri}")
            if inbox.timed_out:
                raise Err(f"nothing arrived for {QUIET_LIMIT} s")
    except ToolingError as error:
        raise Err(f"the demo tooling failed: {error}") from None
    return "\n".join(lines)
