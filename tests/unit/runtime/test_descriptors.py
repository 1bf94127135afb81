"""How the host counts the file descriptors a guest holds through its granted folders.

A guest cannot hold host descriptors up to `ulimit -n`. The component test
(tests/component/guests/test_guest_descriptors.py) runs a real guest; these check the count itself with
descriptors this test opens as a guest's WASI would.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host.config import DirGrant
from agent_host.policy.grants import Limit
from agent_host.runtime import descriptors
from agent_host.runtime.descriptors import HOST_RESERVE, Watch


@pytest.fixture(autouse=True)
def every_change_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table is read again at each change, however close together (a test's opens are); each
    test has a ledger of its own, as a host process starting (its baseline taken at its first watch)."""
    monkeypatch.setattr(descriptors, "MIN_RESCAN", 0.0)
    monkeypatch.setattr(descriptors, "_LEDGER", descriptors._Ledger())


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


def test_a_run_does_not_inherit_the_descriptors_an_earlier_run_held_when_it_started(
    tmp_path: Path, opened: list[int]
) -> None:
    (tmp_path / "f").write_text("x")
    first = watched(tmp_path, 1000)
    held = [os.open(tmp_path / "f", os.O_RDONLY) for _ in range(5)]
    second = watched(tmp_path, 3)  # starts while the first holds them
    try:
        assert first.check() is None
        first.close()
        for fd in held:
            os.close(fd)
        opened.extend(os.open(tmp_path / "f", os.O_RDONLY) for _ in range(5))  # the same numbers, same path
        assert sorted(opened) == sorted(held)
        refusal = second.check()
        assert second.held == 5
        assert refusal is not None and "holds 5 host file descriptors" in refusal
    finally:
        first.close()
        second.close()


def test_what_was_open_before_the_first_run_is_never_counted_and_leaves_the_baseline_once_closed(
    tmp_path: Path, opened: list[int]
) -> None:
    (tmp_path / "f").write_text("x")
    early = os.open(tmp_path / "f", os.O_RDONLY)
    watch = watched(tmp_path, 1000)
    try:
        assert watch.check() is None and watch.held == 0
        os.close(early)
        assert watch.check() is None and watch.held == 0  # seen closed
        opened.append(os.open(tmp_path / "f", os.O_RDONLY))
        assert opened == [early]
        assert watch.check() is None and watch.held == 1
    finally:
        watch.close()


def test_a_folder_granted_under_two_names_or_through_a_symlink_is_one_folder(tmp_path: Path, opened: list[int]) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "f").write_text("x")
    (tmp_path / "link").symlink_to(real)
    both = [DirGrant(host=real, guest="/a"), DirGrant(host=tmp_path / "link", guest="/b")]
    watch = descriptors.watch(both, Limit(3, "max_open_files in test"))
    assert watch is not None
    try:
        opened.extend(os.open(real, os.O_RDONLY) for _ in range(2))  # its two preopens
        opened.extend(os.open(tmp_path / "link" / "f", os.O_RDONLY) for _ in range(2))
        opened.append(os.open(tmp_path / "link", os.O_RDONLY))
        assert watch.check() is None and watch.held == 3
    finally:
        watch.close()


def test_renamed_deleted_files_and_directory_streams_count(tmp_path: Path, opened: list[int]) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "f").write_text("x")
    watch = watched(tmp_path, 1000)
    try:
        opened.append(os.open(tmp_path / "f", os.O_RDONLY))
        os.rename(tmp_path / "f", tmp_path / "sub" / "g")
        opened.append(os.open(tmp_path / "sub" / "g", os.O_RDONLY))
        os.unlink(tmp_path / "sub" / "g")
        opened.append(os.open(tmp_path / "sub", os.O_RDONLY | os.O_DIRECTORY))
        assert watch.check() is None and watch.held == 3
    finally:
        watch.close()


def test_a_descriptor_whose_path_is_too_long_to_read_counts(tmp_path: Path, opened: list[int]) -> None:
    watch = watched(tmp_path, 1000)
    try:
        parent = os.open(tmp_path, os.O_RDONLY)
        opened.append(parent)
        for _ in range(25):  # 25 x 200 characters: past PATH_MAX
            os.mkdir("d" * 200, dir_fd=parent)
            parent = os.open("d" * 200, os.O_RDONLY, dir_fd=parent)
            opened.append(parent)
        deep = os.open("f", os.O_CREAT | os.O_RDWR, 0o600, dir_fd=parent)
        opened.append(deep)
        with pytest.raises(OSError):
            os.readlink(f"/proc/self/fd/{deep}")
        assert watch.check() is None and watch.held == len(opened) - 1  # all but its preopen, readable or not
    finally:
        watch.close()


def test_a_path_too_long_to_read_counts_for_the_guests_granted_a_writable_folder_only(
    tmp_path: Path, opened: list[int]
) -> None:
    """Only a guest that can write can make a path past `PATH_MAX` (renaming folders above files it
    holds): such descriptors count for it, not for a guest of read-only folders running beside it."""
    writer, reader = tmp_path / "writer", tmp_path / "reader"
    writer.mkdir()
    reader.mkdir()
    mine = descriptors.watch([DirGrant(host=writer, guest="/w", writable=True)], Limit(1000, "max_open_files"))
    theirs = descriptors.watch([DirGrant(host=reader, guest="/r")], Limit(1000, "max_open_files"))
    assert mine is not None and theirs is not None
    try:
        parent = os.open(writer, os.O_RDONLY)
        opened.append(parent)
        for _ in range(25):  # 25 x 200 characters: past PATH_MAX
            os.mkdir("d" * 200, dir_fd=parent)
            parent = os.open("d" * 200, os.O_RDONLY, dir_fd=parent)
            opened.append(parent)
        opened.append(os.open("f", os.O_CREAT | os.O_RDWR, 0o600, dir_fd=parent))
        assert mine.check() is None and theirs.check() is None
        assert theirs.held == 0
        assert mine.held >= 5  # those it can read, and those past PATH_MAX
    finally:
        mine.close()
        theirs.close()


def test_the_host_keeps_its_reserve_whatever_its_descriptors_are(
    tmp_path: Path, opened: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_text("x")
    watch = watched(tmp_path, 1000)
    pairs: list[socket.socket] = []
    try:
        opened.append(os.open(tmp_path / "f", os.O_RDONLY))
        assert watch.check() is None
        in_use = len(os.listdir("/proc/self/fd"))
        monkeypatch.setattr(descriptors._LEDGER, "_soft_limit", in_use + HOST_RESERVE + 5)
        for _ in range(10):  # sockets (a busy serve's connections) use up the reserve
            pairs.extend(socket.socketpair())
        refusal = watch.check()
        assert refusal is not None and f"it keeps {HOST_RESERVE}" in refusal
    finally:
        watch.close()
        for sock in pairs:
            sock.close()


class Stops:
    """What the watcher thread stopped a watch's guest for (`Watch.on_over`)."""

    def __init__(self, watch: Watch) -> None:
        self.done = threading.Event()
        self.reasons: list[str] = []
        watch.on_over(self.stop)

    def stop(self, reason: str) -> None:
        self.reasons.append(reason)
        self.done.set()


def test_the_watcher_stops_a_guest_past_its_limit_that_runs_no_wasm(tmp_path: Path, opened: list[int]) -> None:
    (tmp_path / "f").write_text("x")
    watch = watched(tmp_path, 3)
    stopped = Stops(watch)
    try:
        opened.extend(os.open(tmp_path / "f", os.O_RDONLY) for _ in range(4))  # no check on its thread
        assert stopped.done.wait(10), "the watcher did not stop the guest"
        assert stopped.reasons == [stopped.reasons[0]] and "holds 4 host file descriptors" in stopped.reasons[0]
    finally:
        watch.close()


def test_the_watcher_stops_the_guest_holding_the_most_when_the_host_is_short(
    tmp_path: Path, opened: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_text("x")
    small, big = watched(tmp_path / "a", 1000), watched(tmp_path / "b", 1000)
    small_stopped, big_stopped = Stops(small), Stops(big)
    try:
        opened.append(os.open(tmp_path / "a" / "f", os.O_RDONLY))
        opened.extend(os.open(tmp_path / "b" / "f", os.O_RDONLY) for _ in range(2))
        in_use = len(os.listdir("/proc/self/fd"))
        monkeypatch.setattr(descriptors._LEDGER, "_soft_limit", in_use + HOST_RESERVE - 10)
        assert big_stopped.done.wait(10), "the watcher did not stop the guest holding the most"
        assert f"it keeps {HOST_RESERVE}" in big_stopped.reasons[0]
        assert not small_stopped.done.is_set()
    finally:
        small.close()
        big.close()
