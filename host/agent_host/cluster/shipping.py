"""Compiling each component once on the driver and shipping it to the workers.

`ship` compiles the component where the driver runs (cached as locally) and puts both forms in
Ray's object store: the compiled artifact with its memory image, under the cache key it is valid
for, and the wasm. A
worker (`Runtime.load_shipped`) uses its own machine's cache first and fetches a form only when it
needs it: the artifact when its machine's key matches, else the wasm, compiled there once. On one
machine (a local cluster) the workers share the driver's cache and fetch nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_host._support.stopping import StopToken
from agent_host.errors import ComponentError
from agent_host.runtime.engine import Runtime, key_of


@dataclass(frozen=True)
class Shipment:
    """A component in Ray's object store (`runtime.engine.Shipped`). The references are fetched
    by `compiled` and `wasm`, on the worker, only when called."""

    digest: str
    key: str
    refs: tuple[Any, Any, Any]
    """(artifact, wasm, memory image) object references; in a tuple, so that Ray does not fetch
    them eagerly."""

    def compiled(self) -> bytes:
        return self._fetch(0)

    def wasm(self) -> bytes:
        return self._fetch(1)

    def image(self) -> bytes:
        return self._fetch(2)

    def _fetch(self, form: int) -> bytes:
        import ray

        data: bytes = ray.get(self.refs[form])
        return data


def ship(runtime: Runtime, wasm: Path, stop: StopToken) -> Shipment:
    """`wasm` compiled by `runtime` (once per machine, cached) and put in the object store with its
    wasm. Raises `ComponentError` when it cannot be read or is not a component, `Interrupted` on a
    stop request."""
    import ray

    component = runtime.load(wasm, stop)
    try:
        data = wasm.read_bytes()
    except OSError as exc:
        raise ComponentError(f"cannot read component {wasm}: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    refs = (ray.put(bytes(component.serialize())), ray.put(data), ray.put(runtime.memory_image(component)))
    return Shipment(digest, key_of(digest), refs)
