"""Reading the audit log of an `agent-host serve` test, and waiting for it to show something.

`audited(path)` is every line as JSON (none before the file exists); `calls_of(path, target)` the
`serve-call` lines of one tool; `waiting(path)` whether agent `probe` made its blocking call (the
`WAITING` input of `serve_configs` has reached its wait); `wait_for(condition, what)` polls a
condition for at most `WAIT` seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

WAIT: Final = 60.0
"""Seconds any one wait of these tests may take (a bound, never a synchronisation)."""


def audited(path: Path) -> list[dict[str, Any]]:
    """Every line of the audit log at `path`, parsed (none when the file does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` every 50 ms until it holds; fail naming `what` after `WAIT` seconds."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT} s: {what}"
        time.sleep(0.05)


def calls_of(path: Path, target: str) -> list[dict[str, Any]]:
    """The audit lines of served calls of tool `target`."""
    return [line for line in audited(path) if line["operation"] == "serve-call" and line["target"] == target]


def waiting(path: Path) -> bool:
    """Whether agent `probe` made a blocking call (a `WAITING` guest is now waiting in its inbox)."""
    return any(line["operation"] == "call-tool-blocking" and line["agent"] == "probe" for line in audited(path))
