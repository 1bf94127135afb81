"""How the host counts the file descriptors a guest holds through its granted folders.

Provenance: docs/notes/hardening-open.md, item 10 (a guest held host descriptors up to `ulimit -n`).
The component test (tests/component/guests/test_guest_descriptors.py) runs a real guest; these check the
count itself with descriptors this test opens as a guest's WASI would.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host.config import DirGrant
from agent_host.policy.grants import Limit
from agent_host.runtime import descriptors
from agent_host.runtime.descriptors import HOST_RESERVE, Watch


@pytest.fixture(autouse=True)
def every_change_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table is read again at each change, however close together (a test's opens are)."""
    monkeypatch.setattr(descriptors, "MIN_RESCAN", 0.0)


@pytest.fixture
def opened() -> Iterator[list[int]]:
    fds: list[int] = []
    yield fds
    for fd in fds:
        os.close(fd)


def grant(folder: Path) -> list[DirGrant]:
    return [DirGrant(host=folder, guest="/data")]


def watched(folder: Path, limit: int) -> Watch:
    watch = descriptors.watch(grant(folder), Limit(limit, "max_open_files in test"))
    assert watch is not None
    return watch


def test_a_guest_holds_what_was_opened_in_its_folders_after_it_started_less_its_preopen(
    tmp_path: Path, opened: list[int]
) -> None:
    (tmp_path / "f").write_text("x")
    opened.append(os.open(tmp_path / "f", os.O_RDONLY))  # before the run: not the guest's
    watch = watched(tmp_path, 3)
    try:
        opened.append(os.open(tmp_path, os.O_RDONLY))  # its preopen
        opened.extend(os.open(tmp_path / "f", os.O_RDONLY) for _ in range(3))
        assert watch.check() is None and watch.held == 3
        opened.append(os.open(tmp_path, os.O_RDONLY))  # the folder itself, once more
        refusal = watch.check()
        assert watch.held == 4
        assert refusal is not None and "holds 4 host file descriptors" in refusal
        assert "more than 3 (max_open_files in test)" in refusal
    finally:
        watch.close()
        watch.close()
    assert watch.check() is None


def test_descriptors_elsewhere_are_not_a_guests(tmp_path: Path, opened: list[int]) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine-not").mkdir()
    (tmp_path / "mine-not" / "f").write_text("x")
    watch = watched(tmp_path / "mine", 1)
    try:
        opened.extend(os.open(tmp_path / "mine-not" / "f", os.O_RDONLY) for _ in range(5))
        assert watch.check() is None and watch.held == 0
    finally:
        watch.close()


def test_when_the_host_is_short_of_descriptors_the_guest_holding_the_most_is_stopped(
    tmp_path: Path, opened: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_text("x")
    small, big = watched(tmp_path / "a", 1000), watched(tmp_path / "b", 1000)
    try:
        opened.append(os.open(tmp_path / "a" / "f", os.O_RDONLY))
        opened.extend(os.open(tmp_path / "b" / "f", os.O_RDONLY) for _ in range(2))
        assert small.check() is None and big.check() is None
        in_use = len(os.listdir("/proc/self/fd"))
        monkeypatch.setattr(descriptors._LEDGER, "_soft_limit", in_use + HOST_RESERVE - 10)
        opened.append(os.open(tmp_path / "b" / "f", os.O_RDONLY))  # the table changes: counted again
        assert small.check() is None
        refusal = big.check()
        assert refusal is not None and f"it keeps {HOST_RESERVE}" in refusal and "(3)" in refusal
    finally:
        small.close()
        big.close()


def test_no_folder_no_watch() -> None:
    assert descriptors.watch([], Limit(1, "k")) is None


def test_the_soft_limit_is_raised_to_the_hard_one() -> None:
    import resource

    soft = descriptors.raise_soft_limit()
    assert soft == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert hard == resource.RLIM_INFINITY or soft == min(hard, descriptors.RAISED_LIMIT_CAP)
