"""Why a guest trapped, told for a person: decided by the host's state, illustrated by the guest's words.

What ended a run is host state, decided by the runner (`runtime.guest`): a time limit or a stop
(`RunGuard`), a host function's failure, a memory growth the host refused (`memory_limit`), else
the wasm trap itself. This module words it. `memory_limit_reason` is the memory-limit report, used
only when the host refused a growth. `trap_reason` words any other trap: the wasm trap, plus what
the guest left on stderr, quoted as the guest's words (`the guest raised ...`: the last Python
traceback there, or CPython's fatal object dump; text the guest controls, so it never picks a status,
an exit code or a limit), plus the last error a host import returned to the guest (the likely cause
when a component not built by `agent-host build` lets an `Err` escape `run`). `advice` gives hint
lines for what a failure or trap names (`ADVICE`, by exception type), nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

from agent_host.config import format_size
from agent_host.errors import ToolingError, missing_module_hints
from agent_host.policy.grants import AgentPolicy


def innermost(message: str) -> str:
    """The innermost cause of a wasmtime error: the last line after `Caused by:`."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if "Caused by:" in lines:
        tail = lines[lines.index("Caused by:") + 1 :]
        if tail:
            return tail[-1].split(": ", 1)[-1] if tail[-1][:1].isdigit() else tail[-1]
    return lines[0] if lines else "unknown trap"


def trap_reason(message: str, err_path: Path, last_error: ToolingError | None) -> str:
    """Why the guest trapped when no limit of the host explains it, for a person: the exception the
    guest's stderr names (its words; with a hint from `WORD_HINTS`), else the wasm trap message
    plus the last error a host import returned to it."""
    reason = innermost(message)
    raised = guest_exception(err_path)
    if raised is not None:
        kind, detail, place = raised
        # The exception is the explanation; the wasm trap it caused (an exit, `unreachable`) adds nothing.
        return f"the guest raised {kind}{': ' + detail if detail else ''}{' at ' + place if place else ''}"
    if last_error is not None:
        return (
            f"{reason}; the last error the host returned to the guest was {last_error} "
            "(an `Err` that escapes run() traps a guest not built by `agent-host build`)"
        )
    return reason


def memory_limit_reason(policy: AgentPolicy, err_path: Path | None = None, trap: str | None = None) -> str:
    """The memory-limit report, for a run whose memory growth the host refused. Where the guest
    says it ran out (a `MemoryError` on its stderr, as `agentlib` reports it) is added in brackets;
    when its stderr names no `MemoryError`, the wasm `trap` it then hit (such as a stack overflow)
    is added."""
    limit = policy.limits.memory
    raised = guest_exception(err_path) if err_path is not None else None
    said = raised is not None and raised[0] == "MemoryError"
    where = f" ({raised[1]})" if said and raised is not None and raised[1] else ""
    then = f"; then: {innermost(trap)}" if trap is not None and not said else ""
    return (
        f"memory limit: the guest ran out of memory at {format_size(int(limit.value))}{where}; "
        f"the limit is {limit.key}{then}"
    )


ADVICE: Final[dict[str, Callable[[str, str | None], tuple[str, ...]]]] = {
    "ModuleNotFoundError": missing_module_hints,
}
"""Hint lines for what a guest's failure or trap names, by exception type: (its message, the guest
folder when known) -> the hints, the fix for this case first. A hint only: the guest's words never
decide a status or a limit."""

_NAMED: Final = re.compile(r"^(?:the guest raised )?([A-Za-z_][\w.]*): (.*?)(?: \(at [^)]*\)| at \S+)?$", re.DOTALL)


def advice(text: str, folder: str | None = None) -> tuple[str, ...]:
    """Hint lines for a run that ended with `text` (a failure's `TYPE: message (at FILE:LINE)` or a
    trap's `the guest raised TYPE: message at FILE:LINE`); () when `ADVICE` has none."""
    named = _NAMED.match(text)
    if named is None:
        return ()
    hints = ADVICE.get(named.group(1))
    return hints(named.group(2), folder) if hints is not None else ()


_TRACEBACK: Final = "Traceback (most recent call last):"
_FRAME: Final = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
_DUMP_TYPE: Final = re.compile(r"^object type name: (\w+)\s*$", re.MULTILINE)
"""CPython's fatal object dump (printed when it cannot even format the traceback)."""


def guest_exception(err_path: Path) -> tuple[str, str, str | None] | None:
    """(type name, message, FILE:LINE of the innermost frame or None) of the exception ending the
    last Python traceback on the guest's stderr: the guest's words, not host state."""
    try:
        text = err_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if _TRACEBACK not in text:
        return None
    after = text[text.rindex(_TRACEBACK) + len(_TRACEBACK) :]
    dump = _DUMP_TYPE.search(after)
    if dump is not None:
        return dump.group(1), "", None
    line = next((line for line in after.splitlines() if line.strip() and not line[:1].isspace()), None)
    if line is None:
        return None
    frames = _FRAME.findall(after[: after.index(line)])
    place = f"{frames[-1][0]}:{frames[-1][1]}" if frames else None
    kind, _, detail = line.strip().partition(": ")
    return kind, detail, place
