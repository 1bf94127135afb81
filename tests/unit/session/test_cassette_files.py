"""Cassette files: written with mode 0600 whatever the umask (a replaced one is tightened to it),
never larger than a replay reads; a replay (`--replay`, the pytest fixture) reads only a regular
file of at most `MAX_CASSETTE_BYTES`, following a link to one, and refuses anything else at once
(a device, a FIFO, a folder, a file past the bound), naming the path, what it is and the fix.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_host.errors import CassetteError
from agent_host.session import cassette
from agent_host.session.cassette import Recording
from agent_host.testing import AgentHost
from agent_host.testing.runner import Record
from tests.support import in_process
from tests.support.modes import mode, umask

BOUND = 64 * 1024 * 1024
"""The most a cassette file may hold, as the documentation says (`cassette.MAX_CASSETTE_BYTES`)."""


def recording(agent: str = "agent") -> cassette.Cassette:
    """A cassette of one agent that made one call."""
    recorded = Recording()
    recorded.recorder(agent, "in").answered("get", ["demo"], 1)
    return recorded.cassette


def not_cassettes(folder: Path) -> dict[str, tuple[Path, str]]:
    """Paths a replay must refuse, each with what its message calls it."""
    fifo = folder / "fifo.json"
    os.mkfifo(fifo)
    big = folder / "big.json"
    with big.open("wb") as sparse:
        sparse.truncate(BOUND + 1)  # sparse: no disk, no time
    (folder / "folder.json").mkdir()
    return {
        "device": (Path("/dev/zero"), "a character device, not a cassette file"),
        "fifo": (fifo, "a pipe (FIFO), not a cassette file"),
        "folder": (folder / "folder.json", "a folder, not a cassette file"),
        "big": (big, "more than 64 MiB, the most a cassette may hold"),
    }


def test_a_new_cassette_is_private_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with umask(0):
        cassette.save(recording(), path)
    assert mode(path) == 0o600
    assert sorted(cassette.load(path).agents) == ["agent"]


def test_a_cassette_recorded_over_a_readable_one_is_tightened_and_a_narrower_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    cassette.save(recording("other"), path)
    path.chmod(0o644)
    with umask(0):
        cassette.save(recording(), path)
    assert mode(path) == 0o600
    assert sorted(cassette.load(path).agents) == ["agent", "other"]  # still the same file, other tapes kept
    path.chmod(0o400)
    cassette.save(recording(), path)
    assert mode(path) == 0o400


def test_a_recording_that_would_pass_what_a_replay_reads_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cassette, "MAX_CASSETTE_BYTES", 100)
    path = tmp_path / "c.json"
    with pytest.raises(CassetteError, match="not written: the cassette would pass") as refused:
        cassette.save(recording(), path)
    assert refused.value.exit_code == 2
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary file


@pytest.mark.parametrize("kind", ["device", "fifo", "big"])
def test_replay_refuses_at_once_what_is_not_a_regular_file_within_the_bound(tmp_path: Path, kind: str) -> None:
    target, said = not_cassettes(tmp_path)[kind]
    done = in_process.run("run", "nothing.wasm", "--replay", str(target), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"agent-host: error: {target}: {said}" in done.stderr
    assert "hint: pass the file that `agent-host run ... --record FILE` wrote" in done.stderr


def test_the_fixture_refuses_the_same_files_and_a_folder(tmp_path: Path) -> None:
    guest = tmp_path / "g.wasm"
    guest.write_bytes(b"")
    with AgentHost(tmp_path, tmp_path) as runner:
        for target, said in not_cassettes(tmp_path).values():
            records: tuple[Record, ...] = ("once", "none")  # once: the path exists, so it is replayed
            for record in records:
                with pytest.raises(CassetteError) as refused:
                    runner.run(guest, cassette=target, record=record)
                assert refused.value.message.startswith(f"{target}: {said}"), refused.value.message


def test_a_link_is_followed_to_a_cassette_and_judged_by_what_it_names(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    cassette.save(recording(), real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert sorted(cassette.load(link).agents) == ["agent"]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    to_fifo = tmp_path / "to-fifo.json"
    to_fifo.symlink_to(fifo)
    with pytest.raises(CassetteError, match=r"to-fifo\.json: a pipe \(FIFO\), not a cassette file"):
        cassette.load(to_fifo)
