"""`cache.turn`: one maker at a time per key; a stop ends the wait; no lock file is left."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from agent_host import cache

pytestmark = pytest.mark.real_processes  # their subject: a turn held by another process


def test_a_free_turn_is_taken_at_once_and_its_file_removed(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "build-k.lock"
    with cache.turn(lock) as mine:
        assert mine and lock.exists()
    assert not lock.exists()


def test_a_turn_held_elsewhere_is_waited_for_and_a_stop_ends_the_wait(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "build-k.lock"
    lock.parent.mkdir()
    holder = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another open file description: as another process would
    waits: list[float] = []
    shown: list[str] = []

    class Waiting:
        def __enter__(self) -> None:
            shown.append("waiting")

        def __exit__(self, *exc: object) -> None:
            shown.append("done")

    def stop_on_third(timeout: float) -> bool:
        waits.append(timeout)
        return len(waits) == 3

    try:
        with cache.turn(lock, stop_on_third, Waiting) as mine:
            assert mine is False
    finally:
        os.close(holder)
    assert waits == [cache.locks.TURN_POLL] * 3 and shown == ["waiting", "done"]
    assert lock.exists()  # the holder's turn is not over: its file stays
