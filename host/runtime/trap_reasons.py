"""Why a guest trapped, told for a person, from the wasm trap and what the guest left on stderr.

The Python exception the guest died of is read from the last traceback on its stderr (or from
CPython's fatal object dump); an exception that a host limit explains (running out of memory)
is told by that limit and where it is set (`EXCEPTION_REASONS`, keyed by exception type name).
Without a traceback, the last error a host import returned to the guest is named: the likely
cause when a component not built by `agent-host build` lets an `Err` escape `run`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Final

from host.config import format_size
from host.errors import MISSING_MODULE_HINT, ToolingError
from host.policy import AgentPolicy


def innermost(message: str) -> str:
    """The innermost cause of a wasmtime error: the last line after `Caused by:`."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if "Caused by:" in lines:
        tail = lines[lines.index("Caused by:") + 1 :]
        if tail:
            return tail[-1].split(": ", 1)[-1] if tail[-1][:1].isdigit() else tail[-1]
    return lines[0] if lines else "unknown trap"


def trap_reason(message: str, err_path: Path, last_error: ToolingError | None, policy: AgentPolicy) -> str:
    """Why the guest trapped, for a person: the Python exception it died of (a known one, such as
    running out of memory, explained by `EXCEPTION_REASONS`), else the wasm trap message plus the
    last error a host import returned to it (the likely cause when a guest not built by
    `agent-host build` lets an `Err` escape `run`)."""
    reason = innermost(message)
    raised = _guest_exception(err_path)
    if raised is not None:
        kind, detail, place = raised
        explain = EXCEPTION_REASONS.get(kind)
        if explain is not None:
            return explain(detail, policy)
        # The exception is the explanation; the wasm trap it caused (an exit, `unreachable`) adds nothing.
        return f"the guest raised {kind}{': ' + detail if detail else ''}{' at ' + place if place else ''}"
    if last_error is not None:
        return (
            f"{reason}; the last error the host returned to the guest was {last_error} "
            "(an `Err` that escapes run() traps a guest not built by `agent-host build`)"
        )
    return reason


def _out_of_memory(detail: str, policy: AgentPolicy) -> str:
    limit = policy.limits.memory
    where = f" ({detail})" if detail else ""
    return (
        f"memory limit: the guest ran out of memory at {format_size(int(limit.value))}{where}; the limit is {limit.key}"
    )


def _missing_module(detail: str, policy: AgentPolicy) -> str:
    return f"the guest raised ModuleNotFoundError: {detail}; {MISSING_MODULE_HINT}"


EXCEPTION_REASONS: Final[dict[str, Callable[[str, AgentPolicy], str]]] = {
    "MemoryError": _out_of_memory,
    "ModuleNotFoundError": _missing_module,
}
"""Python exceptions a guest dies of that a limit of the host explains, by exception type name."""

_TRACEBACK: Final = "Traceback (most recent call last):"
_FRAME: Final = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
_DUMP_TYPE: Final = re.compile(r"^object type name: (\w+)\s*$", re.MULTILINE)
"""CPython's fatal object dump (printed when it cannot even format the traceback)."""


def _guest_exception(err_path: Path) -> tuple[str, str, str | None] | None:
    """(type name, message, FILE:LINE of the innermost frame or None) of the exception ending the
    last Python traceback on the guest's stderr."""
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
