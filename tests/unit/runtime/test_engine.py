"""The compiled-component cache: compile once, load after; corrupt or foreign files never crash.

The cache key is the wasm's hash, the wasmtime version and the engine settings; a corrupt or stale
artifact is recompiled, not fatal; a progress message shows while the first compile runs. Components
here are written in WAT, so no toolchain is needed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import wasmtime

from agent_host.errors import ComponentError
from agent_host.runtime.engine import Runtime, cache_key
from tests.support import wat

WAT = "(component)"


@pytest.fixture
def wasm(tmp_path: Path) -> Path:
    path = tmp_path / "empty.wasm"
    path.write_text(WAT)
    return path


def artifacts(cache: Path) -> list[str]:
    return sorted(p.suffix for p in (cache / "compiled").iterdir())


def test_the_first_load_compiles_with_progress_and_stores_an_artifact(
    tmp_path: Path, wasm: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Runtime(tmp_path / "cache") as runtime:
        runtime.load(wasm)
    assert "compiling empty.wasm" in capsys.readouterr().err
    # .image: its memory image (empty: this one has none); .source: the wasm it came from
    assert artifacts(tmp_path / "cache") == [".cwasm", ".image", ".sha256", ".source"]
    source = next((tmp_path / "cache" / "compiled").glob("*.source"))
    assert source.read_text() == str(wasm.resolve())


def test_a_second_host_loads_from_the_cache_without_compiling(
    tmp_path: Path, wasm: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Runtime(tmp_path / "cache") as runtime:
        runtime.load(wasm)
    capsys.readouterr()
    with Runtime(tmp_path / "cache") as runtime:
        runtime.load(wasm)
    assert "compiling" not in capsys.readouterr().err


def test_an_unchanged_wasm_and_artifact_are_not_read_again(
    tmp_path: Path, wasm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashing the 18 MB wasm and the 35 MB artifact at every start would cost ~0.1 s."""
    cache = tmp_path / "cache"
    with Runtime(cache) as runtime:
        runtime.load(wasm)
    read: list[str] = []
    original = Path.read_bytes

    def counted(self: Path) -> bytes:
        read.append(self.suffix)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    with Runtime(cache) as runtime:
        runtime.load(wasm)
    assert read == []
    wasm.write_text("(component (core module))")  # changed: read and keyed again, compiled anew
    with Runtime(cache) as runtime:
        runtime.load(wasm)
    assert ".wasm" in read
    assert len(list((cache / "compiled").glob("*.cwasm"))) == 2


@pytest.mark.parametrize("damage", ["truncate", "garble", "garble-keep-mtime", "drop-sidecar"])
def test_a_damaged_artifact_is_recompiled_not_fatal(
    tmp_path: Path, wasm: Path, damage: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    with Runtime(cache) as runtime:
        runtime.load(wasm)
    artifact = next((cache / "compiled").glob("*.cwasm"))
    if damage == "truncate":
        artifact.write_bytes(artifact.read_bytes()[:100])
    elif damage.startswith("garble"):
        before = artifact.stat()
        artifact.write_bytes(b"\0" * before.st_size)
        if damage == "garble-keep-mtime":  # same size and mtime: only its ctime tells
            os.utime(artifact, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        artifact.with_suffix(".sha256").unlink()
    capsys.readouterr()
    with caplog.at_level(logging.WARNING), Runtime(cache) as runtime:
        runtime.load(wasm)
    assert "compiling" in capsys.readouterr().err
    if damage != "drop-sidecar":
        assert "corrupt" in caplog.text
    assert artifacts(cache) == [".cwasm", ".image", ".sha256", ".source"]


def test_a_components_memory_image_is_kept_beside_its_artifact_and_needed_to_load_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scribbler = tmp_path / "scribbler.wasm"
    scribbler.write_bytes(bytes(wasmtime.wat2wasm(wat.scribbler())))
    cache = tmp_path / "cache"
    with Runtime(cache) as runtime:
        runtime.load(scribbler)
    image = next((cache / "compiled").glob("*.image"))
    assert image.read_bytes()[64:69] == b"fresh"
    image.unlink()  # an artifact without its image is not loaded: its memory would start empty
    capsys.readouterr()
    with Runtime(cache) as runtime:
        runtime.load(scribbler)
    assert "compiling" in capsys.readouterr().err
    assert image.read_bytes()[64:69] == b"fresh"


def test_the_cache_key_depends_on_the_bytes() -> None:
    assert cache_key(b"a") != cache_key(b"b")
    assert cache_key(b"a") == cache_key(b"a")


def test_a_file_that_is_not_a_component_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.wasm"
    bogus.write_bytes(b"hello, not wasm")
    with Runtime(tmp_path / "cache") as runtime, pytest.raises(ComponentError) as caught:
        runtime.load(bogus)
    assert "is not a WebAssembly component this host can run" in str(caught.value)
    assert caught.value.hint is not None and "agent-host build" in caught.value.hint


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with Runtime(tmp_path / "cache") as runtime, pytest.raises(ComponentError, match="cannot read component"):
        runtime.load(tmp_path / "absent.wasm")
