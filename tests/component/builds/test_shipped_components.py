"""A component shipped to a Ray worker is compiled once: from the worker's cache, else the driver's
artifact, else compiled there from the wasm (`Runtime.load_shipped`).

The guest is built and compiled once; the compiled component reaches workers through the object
store or a shared cache keyed by content and wasmtime version. Ray is not needed here: the shipment
is a stand-in that records which of its forms were fetched.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from wasmtime import Store

from agent_host._support.paths import cache_dir
from agent_host.runtime.engine import Runtime, key_of

pytestmark = pytest.mark.component


@dataclass
class Shipment:
    """A `runtime.engine.Shipped` that records what was fetched."""

    digest: str
    key: str
    artifact: bytes
    code: bytes
    memory_image: bytes
    fetched: list[str] = field(default_factory=list)

    def compiled(self) -> bytes:
        self.fetched.append("compiled")
        return self.artifact

    def wasm(self) -> bytes:
        self.fetched.append("wasm")
        return self.code

    def image(self) -> bytes:
        self.fetched.append("image")
        return self.memory_image


def shipment(
    probe_wasm: Path, *, artifact: bytes | None = None, image: bytes = b"", key: str | None = None
) -> Shipment:
    code = probe_wasm.read_bytes()
    digest = hashlib.sha256(code).hexdigest()
    if artifact is None:
        with Runtime(cache_dir()) as driver:  # the driver compiles (cached by the test run)
            component = driver.load(probe_wasm)
            artifact, image = bytes(component.serialize()), driver.memory_image(component)
    return Shipment(digest, key if key is not None else key_of(digest), artifact, code, image)


def loads(runtime: Runtime, sent: Shipment) -> None:
    """`sent` loads in `runtime` and instantiates (its imports are the host's)."""
    component = runtime.load_shipped(sent)
    store = Store(runtime.engine)
    store.set_epoch_deadline(1_000_000)  # the engine interrupts at epoch deadlines; this one is far
    try:
        assert runtime.instantiate(store, component) is not None
    finally:
        store.close()


def test_a_worker_takes_the_drivers_artifact_once_then_its_own_cache(probe_wasm: Path, tmp_path: Path) -> None:
    first = shipment(probe_wasm)
    with Runtime(tmp_path) as worker:
        loads(worker, first)
        loads(worker, first)  # a second agent on the same worker: already loaded
    assert first.fetched == ["compiled", "image"]
    assert (tmp_path / "compiled" / f"{first.key}.cwasm").is_file()
    assert (tmp_path / "compiled" / f"{first.key}.image").read_bytes() == first.memory_image != b""
    again = shipment(probe_wasm, artifact=first.artifact, image=first.memory_image)
    with Runtime(tmp_path) as next_worker:  # another worker of the same machine
        loads(next_worker, again)
    assert again.fetched == []


def test_a_worker_compiles_the_wasm_when_the_drivers_artifact_does_not_load_there(
    probe_wasm: Path, tmp_path: Path
) -> None:
    sent = shipment(probe_wasm, artifact=b"compiled for another kind of machine")
    with Runtime(tmp_path) as worker:
        loads(worker, sent)
    assert sent.fetched == ["compiled", "image", "wasm"]
    other = shipment(probe_wasm, artifact=b"never fetched", key="compiled-on-another-platform")
    with Runtime(tmp_path) as next_worker:  # compiled once: now in this machine's cache
        loads(next_worker, other)
    assert other.fetched == []
