"""File permissions in tests: the process's umask set for a block, and a path's permission bits."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def umask(value: int) -> Iterator[None]:
    """The process's umask is `value` inside the block, and what it was after."""
    before = os.umask(value)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    """The permission bits of `path` (a link is followed)."""
    return stat.S_IMODE(os.stat(path).st_mode)
