"""The cache bounds itself: newest builds per guest, a size cap, and never what a running host uses.

`agent-host cache` lists the entries with their sizes, prunes and cleans; the limits are configurable.
Caches here are fake files in a temp folder, except the last tests, which compile a WAT component.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host import cache
from agent_host.cli import main
from agent_host.errors import UsageError
from agent_host.runtime.engine import Runtime

OLD = 10_000.0
"""Seconds before now given to fake files: far older than `cache.FRESH`."""


def fake_build(root: Path, guest: Path, key: str, size: int, age: float) -> Path:
    """A build of guest folder `guest` in `root`, last used `age` seconds ago."""
    wasm = root / "builds" / f"{guest.name}-{key}.wasm"
    wasm.parent.mkdir(parents=True, exist_ok=True)
    wasm.write_bytes(b"w" * size)
    cache.record_source(wasm, guest)
    for path in (wasm, wasm.with_suffix(".source")):
        os.utime(path, (time.time() - age, time.time() - age))
    return wasm


def fake_compiled(root: Path, source: Path, key: str, size: int, age: float) -> Path:
    """An artifact compiled from `source`, last used `age` seconds ago."""
    cwasm = root / "compiled" / f"{key}.cwasm"
    cwasm.parent.mkdir(parents=True, exist_ok=True)
    cwasm.write_bytes(b"c" * size)
    cwasm.with_suffix(".sha256").write_text("x")
    cache.record_source(cwasm, source)
    for path in (cwasm, cwasm.with_suffix(".sha256"), cwasm.with_suffix(".source")):
        os.utime(path, (time.time() - age, time.time() - age))
    return cwasm


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("AGENT_HOST_CACHE", str(folder))
    monkeypatch.delenv(cache.ENV_KEEP, raising=False)
    monkeypatch.delenv(cache.ENV_MAX, raising=False)
    return folder


@pytest.fixture
def unpin_all() -> Iterator[list[Path]]:
    """Paths a test pinned; released afterwards, so that no lock outlives the test."""
    pinned: list[Path] = []
    yield pinned
    for path in pinned:
        while cache.pinned(path):
            cache.unpin(path)


def test_a_build_and_the_artifacts_compiled_from_it_are_one_entry_grouped_by_guest_folder(
    root: Path, tmp_path: Path
) -> None:
    guest = tmp_path / "scout"
    wasm = fake_build(root, guest, "a" * 24, 100, OLD)
    fake_compiled(root, wasm, "k1", 50, OLD)
    fake_compiled(root, tmp_path / "mine.wasm", "k2", 30, OLD)
    (root / "npm" / "pkg").mkdir(parents=True)
    (root / "npm" / "pkg" / "index.js").write_bytes(b"n" * 7)
    listing = cache.scan(root)
    by_name = {entry.name: entry for entry in listing.entries}
    assert set(by_name) == {"scout", "mine.wasm"}
    assert (by_name["scout"].builds, by_name["scout"].compiled) == (1, 1)
    assert by_name["scout"].group == str(guest.resolve())
    assert by_name["scout"].size == 100 + 50 + 1 + len(str(guest.resolve())) + len(str(wasm.resolve()))
    assert listing.npm == 7


def test_prune_keeps_the_newest_builds_of_each_guest_and_removes_their_artifacts_with_them(
    root: Path, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    builds = [fake_build(root, one, f"{i:024d}", 10, OLD + 100 * i) for i in range(5)]  # builds[0] is the newest
    artifacts = [fake_compiled(root, wasm, f"k{i}", 10, OLD + 100 * i) for i, wasm in enumerate(builds)]
    other = fake_build(root, two, "f" * 24, 10, OLD + 1000)
    removal = cache.prune(root, cache.Limits(keep=3, max_bytes=None))
    assert len(removal.removed) == 2
    assert [wasm.exists() for wasm in builds] == [True, True, True, False, False]
    assert [cwasm.exists() for cwasm in artifacts] == [True, True, True, False, False]
    assert not artifacts[4].with_suffix(".sha256").exists() and not artifacts[4].with_suffix(".source").exists()
    assert other.exists()  # another guest's build is counted apart


def test_prune_removes_the_least_recently_used_until_the_cache_fits_its_size_cap(root: Path, tmp_path: Path) -> None:
    builds = [fake_build(root, tmp_path / f"g{i}", "a" * 24, 1000, OLD + i) for i in range(4)]
    cache.prune(root, cache.Limits(keep=3, max_bytes=2500))
    assert [wasm.exists() for wasm in builds] == [True, True, False, False]
    assert cache.scan(root).size <= 2500


def test_an_artifact_whose_build_is_gone_is_removed(root: Path, tmp_path: Path) -> None:
    orphan = fake_compiled(root, root / "builds" / "gone-000.wasm", "k", 10, OLD)
    kept = fake_compiled(root, tmp_path / "elsewhere.wasm", "k2", 10, OLD)
    cache.prune(root, cache.Limits())
    assert not orphan.exists() and kept.exists()


def test_nothing_written_in_the_last_minutes_is_removed(root: Path, tmp_path: Path) -> None:
    builds = [fake_build(root, tmp_path / "g", f"{i:024d}", 10, age=1.0) for i in range(5)]
    assert cache.prune(root, cache.Limits(keep=1, max_bytes=0)).removed == ()
    assert all(wasm.exists() for wasm in builds)


def test_a_pinned_build_is_never_removed_and_goes_once_released(
    root: Path, tmp_path: Path, unpin_all: list[Path]
) -> None:
    builds = [fake_build(root, tmp_path / "g", f"{i:024d}", 10, OLD + i) for i in range(3)]
    assert cache.pin(builds[2])
    unpin_all.append(builds[2])
    removal = cache.prune(root, cache.Limits(keep=1, max_bytes=None))
    assert builds[1] in {path for entry in removal.removed for path in entry.files} and not builds[1].exists()
    assert builds[2].exists()
    cache.unpin(builds[2])
    cache.prune(root, cache.Limits(keep=1, max_bytes=None))
    assert not builds[2].exists()


def test_a_build_pinned_by_another_process_survives_prune_and_clean(root: Path, tmp_path: Path) -> None:
    wasm = fake_build(root, tmp_path / "g", "a" * 24, 10, OLD)
    older = fake_build(root, tmp_path / "g", "b" * 24, 10, OLD + 10)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; from agent_host import cache; "
         "assert cache.pin(Path(sys.argv[1])); print('pinned', flush=True); sys.stdin.read()", str(older)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "pinned\n"
        removal = cache.prune(root, cache.Limits(keep=1, max_bytes=0))
        assert older.exists() and [entry.name for entry in removal.kept] == ["g"]
        cache.clean(root)
        assert older.exists() and not wasm.exists()
    finally:
        holder.communicate("")
    cache.clean(root)
    assert not older.exists()


def test_a_pin_that_waited_for_the_pruner_sees_the_file_gone(root: Path, tmp_path: Path) -> None:
    wasm = fake_build(root, tmp_path / "g", "a" * 24, 10, OLD)
    wasm.unlink()
    assert not cache.pin(wasm)
    assert not cache.pinned(wasm)


def test_publish_pins_the_file_from_before_its_rename(root: Path, unpin_all: list[Path]) -> None:
    tmp = root / "builds" / ".tmp-x.wasm"
    tmp.parent.mkdir(parents=True)
    tmp.write_bytes(b"w")
    target = root / "builds" / "g-000.wasm"
    cache.publish(tmp, target)
    unpin_all.append(target)
    assert cache.pinned(target) and target.exists() and not tmp.exists()
    os.utime(target, (time.time() - OLD, time.time() - OLD))
    cache.clean(root)
    assert target.exists()


def test_stale_temp_files_go_and_those_of_a_build_in_progress_stay(root: Path, unpin_all: list[Path]) -> None:
    (root / "builds").mkdir(parents=True)
    stale, working = root / "builds" / ".tmp-dead.wasm", root / "builds" / ".tmp-live.wasm"
    for path in (stale, working):
        path.write_bytes(b"t")
        os.utime(path, (time.time() - OLD, time.time() - OLD))
    assert cache.pin(working)
    unpin_all.append(working)
    cache.prune(root, cache.Limits())
    assert not stale.exists() and working.exists()


def test_the_limits_come_from_the_environment_and_name_a_bad_value() -> None:
    assert cache.Limits.from_env({}) == cache.Limits(3, 2 * 1024**3)
    assert cache.Limits.from_env({cache.ENV_KEEP: "5", cache.ENV_MAX: "500MB"}) == cache.Limits(5, 500_000_000)
    assert cache.Limits.from_env({cache.ENV_MAX: "1.5GiB"}).max_bytes == int(1.5 * 1024**3)
    assert cache.Limits.from_env({cache.ENV_MAX: "none"}).max_bytes is None
    with pytest.raises(UsageError, match="AGENT_HOST_CACHE_KEEP='0': expected a whole number >= 1"):
        cache.Limits.from_env({cache.ENV_KEEP: "0"})
    with pytest.raises(UsageError, match="AGENT_HOST_CACHE_MAX='lots'"):
        cache.Limits.from_env({cache.ENV_MAX: "lots"})


def test_select_is_pure_and_never_chooses_a_busy_entry(root: Path, tmp_path: Path) -> None:
    for i in range(3):
        fake_build(root, tmp_path / "g", f"{i:024d}", 10, OLD + i)
    listing = cache.scan(root)
    newest_first = sorted(listing.entries, key=lambda e: -e.used)
    chosen = cache.select(listing.entries, cache.Limits(keep=1, max_bytes=None), time.time(), busy=[newest_first[2]])
    assert chosen == [newest_first[1]]
    assert all(path.exists() for entry in listing.entries for path in entry.files)


def test_the_cache_command_lists_prunes_and_cleans(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = [fake_build(root, tmp_path / "scout", f"{i:024d}", 2048, OLD + i) for i in range(4)]
    fake_compiled(root, builds[0], "k", 4096, OLD)
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"cache {root}:" in out and "(limits: 3 per guest, 2.0 GiB)" in out
    assert out.splitlines()[1].split() == ["GUEST", "BUILDS", "COMPILED", "SIZE", "LAST", "USED", "IN", "USE", "SOURCE"]
    assert out.splitlines()[2].split()[:3] == ["scout", "4", "1"]
    assert main(["cache", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["path"] == str(root) and sum(entry["builds"] for entry in listing["entries"]) == 4
    monkeypatch.setenv(cache.ENV_KEEP, "2")
    assert main(["cache", "prune"]) == 0
    assert "removed 2 build(s) and 0 compiled component(s)" in capsys.readouterr().out
    assert [wasm.exists() for wasm in builds] == [True, True, False, False]
    assert main(["cache", "prune", "--keep", "1", "--max", "none"]) == 0
    assert [wasm.exists() for wasm in builds] == [True, False, False, False]
    assert main(["cache", "clean"]) == 0
    assert "removed 1 build(s) and 1 compiled component(s)" in capsys.readouterr().out
    assert cache.scan(root).entries == ()


def test_the_cache_command_names_a_bad_limit(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "prune", "--max", "big"]) == 2
    assert "--max='big': expected a size" in capsys.readouterr().err


def test_a_running_runtime_pins_its_artifact_and_records_its_source(root: Path, tmp_path: Path) -> None:
    wasm = tmp_path / "empty.wasm"
    wasm.write_text("(component)")
    with Runtime(root) as runtime:
        runtime.load(wasm)
        (entry,) = cache.scan(root).entries
        assert entry.group == str(wasm.resolve()) and entry.compiled == 1
        assert cache.in_use(entry)
        assert cache.clean(root, now=time.time() + OLD).removed == ()
    assert not cache.in_use(entry)
    assert len(cache.clean(root, now=time.time() + OLD).removed) == 1


def test_a_stamp_holds_while_its_file_is_unchanged_and_goes_with_the_file(root: Path, tmp_path: Path) -> None:
    """Facts derived from a file's bytes are trusted without reading it while it is unchanged."""
    from agent_host.cache import stamps

    data = tmp_path / "data.bin"
    data.write_bytes(b"one")
    stamps.record(root, data, "key", "k1")
    assert stamps.recall(root, data, "key") == "k1"
    assert stamps.recall(root, data, "sha256") is None  # one stamp per kind
    before = data.stat()
    data.write_bytes(b"two")  # same size; mtime put back: only the ctime tells
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert stamps.recall(root, data, "key") is None
    stamps.record(root, data, "key", "k2")
    data.unlink()
    assert stamps.recall(root, data, "key") is None
    cache.prune(root, cache.Limits(keep=1, max_bytes=10**12))
    assert list((root / stamps.STAMPS).iterdir()) == []
