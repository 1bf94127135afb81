"""The wasmtime `Engine`, the shared `Linker`, the epoch ticker and the compiled-component cache.

Contract:
- One `Engine` per host process, configured once (`ENGINE_SETTINGS`); one `Linker` with every
  import defined, shared by all guests (instantiation is serialized by a lock; it takes ~2 ms).
- Components are compiled once per machine and cached on disk as `compiled/<key>.cwasm`, where key
  = sha256 of (wasm bytes, wasmtime version, engine settings, platform). A sidecar `.sha256` file
  holds the artifact's own hash: a corrupt, truncated or stale artifact is detected before it is
  loaded and recompiled, never fatal. Writes are atomic (temp file + rename), so concurrent hosts
  never read half an artifact. A progress line is shown while compiling (~10 s for 18 MB).
- Loaded components are also kept in memory for the life of the runtime.
- The ticker thread increments the engine's epoch every `EPOCH_TICK` seconds; stores use epoch
  deadlines for time limits. `close()` stops it; it is idempotent.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import platform
import sys
import tempfile
import threading
from pathlib import Path
from typing import Final

from wasmtime import Config, Engine, WasmtimeError
from wasmtime.component import Component, Linker

from host.errors import ComponentError
from host.progress import progress
from host.runtime.imports import define_imports

logger = logging.getLogger(__name__)

EPOCH_TICK: Final = 0.01
"""Seconds between epoch increments: the resolution of time limits."""

ENGINE_SETTINGS: Final = "epoch_interruption=1"
"""Everything about the engine's `Config` that changes compiled code; part of the cache key."""

WASMTIME_VERSION: Final = importlib.metadata.version("wasmtime")


class EpochTicker:
    """A daemon thread that advances an engine's epoch at a fixed rate."""

    def __init__(self, engine: Engine, interval: float = EPOCH_TICK) -> None:
        self._engine = engine
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agent-host-epoch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._engine.increment_epoch()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


class Runtime:
    """Engine, linker, ticker and component cache of one host process."""

    def __init__(self, cache_dir: Path) -> None:
        config = Config()
        config.epoch_interruption = True
        self.engine = Engine(config)
        self.linker = Linker(self.engine)
        define_imports(self.linker)
        self.instantiate_lock = threading.Lock()
        self._compiled_dir = cache_dir / "compiled"
        self._loaded: dict[str, Component] = {}
        self._keys: dict[tuple[str, int, int], str] = {}
        """(path, size, mtime) of files already loaded -> their cache key."""
        self._load_lock = threading.Lock()
        self._ticker = EpochTicker(self.engine)
        self._closed = False

    def load(self, wasm: Path) -> Component:
        """The component in `wasm`, compiled (once per machine) or loaded from the cache.

        A file already loaded and unchanged since (same size and modification time) is neither
        read nor hashed again: starting the same guest many times costs no I/O.
        """
        try:
            stat = wasm.stat()
        except OSError as exc:
            raise ComponentError(f"cannot read component {wasm}: {exc.strerror or exc}") from None
        seen = (str(wasm.resolve()), stat.st_size, stat.st_mtime_ns)
        with self._load_lock:
            key = self._keys.get(seen)
            if key is not None and key in self._loaded:
                return self._loaded[key]
            try:
                data = wasm.read_bytes()
            except OSError as exc:
                raise ComponentError(f"cannot read component {wasm}: {exc.strerror or exc}") from None
            key = cache_key(data)
            self._keys[seen] = key
            component = self._loaded.get(key)
            if component is None:
                component = self._load_or_compile(wasm, data, key)
                self._loaded[key] = component
            return component

    def _load_or_compile(self, wasm: Path, data: bytes, key: str) -> Component:
        artifact = self._compiled_dir / f"{key}.cwasm"
        cached = _load_artifact(self.engine, artifact)
        if cached is not None:
            return cached
        size = len(data) / 1e6
        with progress(f"compiling {wasm.name} ({size:.1f} MB) for this machine (once; cached afterwards)"):
            try:
                component = Component(self.engine, data)
            except WasmtimeError as exc:
                raise ComponentError(
                    f"{wasm} is not a WebAssembly component this host can run: {_first_line(str(exc))}",
                    hint="build it with `agent-host build GUEST_FOLDER` (componentize-py against wit/)",
                ) from None
        try:
            _store_artifact(artifact, bytes(component.serialize()))
        except OSError as exc:
            logger.warning("cannot cache the compiled component in %s: %s", artifact.parent, exc)
        return component

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ticker.close()
        self._loaded.clear()
        self._keys.clear()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cache_key(wasm: bytes) -> str:
    material = "|".join(
        [
            hashlib.sha256(wasm).hexdigest(),
            f"wasmtime {WASMTIME_VERSION}",
            ENGINE_SETTINGS,
            platform.machine(),
            sys.platform,
        ]
    )
    return hashlib.sha256(material.encode()).hexdigest()[:40]


def _load_artifact(engine: Engine, artifact: Path) -> Component | None:
    sidecar = artifact.with_suffix(".sha256")
    try:
        expected = sidecar.read_text().strip()
        actual = hashlib.sha256(artifact.read_bytes()).hexdigest()
    except OSError:
        return None
    if expected != actual:
        logger.warning("compiled component %s is corrupt (hash mismatch); recompiling", artifact.name)
        return None
    try:
        return Component.deserialize_file(engine, str(artifact))
    except WasmtimeError as exc:
        logger.warning("compiled component %s cannot be loaded (%s); recompiling", artifact.name, _first_line(str(exc)))
        return None


def _store_artifact(artifact: Path, serialized: bytes) -> None:
    artifact.parent.mkdir(parents=True, exist_ok=True)
    for path, content in ((artifact, serialized), (artifact.with_suffix(".sha256"), None)):
        body = content if content is not None else hashlib.sha256(serialized).hexdigest().encode()
        fd, tmp = tempfile.mkstemp(dir=artifact.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"
