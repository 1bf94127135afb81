"""Whether a process runs, and waiting for one to go: `alive(pid)` and `gone(pid, within)`, read
from /proc (a zombie waiting to be reaped counts as gone)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Final

GONE_WITHIN: Final = 15.0
"""Seconds a process left by a server may take to go (the host's shutdown is bounded by less)."""


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting to be reaped does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def gone(pid: int, within: float = GONE_WITHIN) -> bool:
    """Whether `pid` stops running within `within` seconds."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
