"""The wasmtime `Engine`, the linkers, the epoch ticker and the compiled-component cache.

One `Engine` per host process, configured once (`ENGINE_SETTINGS`), and one `Linker` per loaded
component with every import defined (made at its first instantiation, then shared by its guests,
instantiation serialized by a lock): one type per import, so `wasmtime_hooks` reads each type once.
Components are compiled once per machine, in a child process (`runtime.compiler`) that a stop
request ends, and cached on disk as `compiled/<cache_key>.cwasm`, its memory image `.image` and a
`.sha256` sidecar of both: a corrupt, truncated or stale one is recompiled, never fatal; writes
are atomic; a file unchanged since its last check is not read again (`cache.stamps`). Files a
runtime loaded stay pinned in the cache (`agent_host.cache`) until `close()`.
A component shipped from elsewhere (`Shipped`: a Ray driver's) is loaded from this machine's
cache, else from the shipped artifact when compiled under this machine's key, else compiled here.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import platform
import shutil
import sys
import threading
from pathlib import Path
from typing import Final, Protocol

from wasmtime import Engine, Store, WasmtimeError
from wasmtime.component import Component, Instance, Linker

from agent_host import cache
from agent_host._support import scratch as temporary
from agent_host._support.progress import progress
from agent_host._support.stopping import StopToken, run_child
from agent_host.cache import stamps
from agent_host.errors import ComponentError
from agent_host.runtime import linkable, memory_limit
from agent_host.runtime.clock import ClockShim
from agent_host.runtime.compiler import (
    ENGINE_SETTINGS,
    IMAGE,
    INVALID_COMPONENT,
    engine_config,
    first_line,
    store_artifact,
)
from agent_host.runtime.imports import define_imports
from agent_host.runtime.run_guard import EPOCH_TICK

logger = logging.getLogger(__name__)

WASMTIME_VERSION: Final = importlib.metadata.version("wasmtime")
"""The installed wasmtime: part of every cache key (an artifact loads only on the wasmtime that made it)."""

_KEY_STAMP: Final = f"key {WASMTIME_VERSION} {ENGINE_SETTINGS}"
"""The stamp kind of a file's cache key: a key remembered under other engine settings or another
wasmtime is not reused (it would name an artifact this engine cannot load)."""


class EpochTicker:
    """A daemon thread that advances an engine's epoch every `interval` seconds; stores use epoch
    deadlines for their time limits. `close()` stops it."""

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


class Shipped(Protocol):
    """A component sent from another machine. Its two forms are fetched only when needed."""

    @property
    def digest(self) -> str:
        """sha256 of the wasm (hex)."""
        ...

    @property
    def key(self) -> str:
        """The cache key the sender compiled it under (`cache_key` on the sender's machine)."""
        ...

    def compiled(self) -> bytes:
        """The artifact the sender compiled (valid where `key` is this machine's key too)."""
        ...

    def wasm(self) -> bytes:
        """The component's wasm."""
        ...

    def image(self) -> bytes:
        """The memory image the artifact was compiled with (`Runtime.memory_image`; empty: none):
        fetched with `compiled`."""
        ...


class Runtime:
    """Engine, linker, ticker and component cache of one host process. Loaded components are kept
    in memory, and their files pinned in the cache, for the life of the runtime; `close()` (which
    is idempotent) stops the ticker and releases them."""

    def __init__(self, cache_dir: Path) -> None:
        """Raises `UnsafeCacheError` when another user may write in `cache_dir` (`cache.private`)."""
        cache.private_cache(cache_dir)  # before anything starts: its compiled code is loaded as trusted
        self.engine = Engine(engine_config())
        self._linkers: dict[int, _Linked] = {}
        """id(component) -> its linker (the entry holds the component, so the id stays its own)."""
        self._linkers_lock = threading.Lock()
        self._cache_dir = cache_dir
        self._compiled_dir = cache_dir / "compiled"
        self._pins: list[Path] = []
        """Files pinned in the cache while this runtime lives."""
        self._loaded: dict[str, Component] = {}
        self._images: dict[int, tuple[Component, memory_limit.MappedImage]] = {}
        """id(component) -> (the component, its memory image: `memory_image`), for components that
        have one (the entry holds the component, so the id stays its own)."""
        self._keys: dict[tuple[str, int, int], str] = {}
        """(path, size, mtime) of files already loaded -> their cache key."""
        self._load_lock = threading.Lock()
        self._ticker = EpochTicker(self.engine)
        self._clock: ClockShim | None = None
        self._clock_lock = threading.Lock()
        self._closed = False

    @property
    def clock(self) -> ClockShim:
        """The host's WASI clock (`runtime.clock`), made at the first use."""
        with self._clock_lock:
            if self._clock is None:
                self._clock = ClockShim(self.engine)
            return self._clock

    def load(self, wasm: Path, stop: StopToken | None = None) -> Component:
        """The component in `wasm`, compiled (once per machine) or loaded from the cache.

        A file already loaded and unchanged since (same size and modification time) is neither
        read nor hashed again: starting the same guest many times costs no I/O.
        Raises `ComponentError` for a file that is not a runnable component (also one importing
        what the host does not link, named: `runtime.linkable`), `Interrupted` when `stop` is set
        while compiling.
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
            if cache.pin(wasm):
                self._pins.append(wasm)
            key = stamps.recall(self._cache_dir, wasm, _KEY_STAMP)  # no read of the file while it is unchanged
            if key is None:
                try:
                    data = wasm.read_bytes()
                except OSError as exc:
                    raise ComponentError(f"cannot read component {wasm}: {exc.strerror or exc}") from None
                key = cache_key(data)
                stamps.record(self._cache_dir, wasm, _KEY_STAMP, key)
            self._keys[seen] = key
            component = self._loaded.get(key)
            if component is None:
                component = self._load_or_compile(wasm, stat.st_size, key, stop)
                self._accept(component, str(wasm))
                self._loaded[key] = component
            return component

    def _accept(self, component: Component, what: str) -> None:
        """`_require_linkable`, with the memory image of a refused component closed."""
        try:
            self._require_linkable(component, what)
        except ComponentError:
            self._forget(component)
            raise

    def _require_linkable(self, component: Component, what: str) -> None:
        """Raise `ComponentError` naming the imports of `component` the host does not link (`linkable`)."""
        found = linkable.problem(component.type.imports(self.engine))
        if found is not None:
            message, hint = found
            raise ComponentError(f"component {what} {message}", hint=hint)

    def load_shipped(self, shipped: Shipped, stop: StopToken | None = None) -> Component:
        """The component `shipped` describes: from this machine's cache; else the shipped artifact
        when it was compiled under this machine's key (stored in the cache); else compiled here from
        the shipped wasm (`load`). Raises as `load` does."""
        key = key_of(shipped.digest)
        with self._load_lock:
            component = self._loaded.get(key)
            if component is None:
                component = self._load_pinned(self._compiled_dir / f"{key}.cwasm", None)
            if component is None and key == shipped.key:
                component = self._store_shipped(key, shipped)
            if component is not None:
                self._accept(component, shipped.digest[:16])
                self._loaded[key] = component
                return component
        scratch = temporary.make("shipped-")
        try:
            wasm = scratch / f"{shipped.digest[:16]}.wasm"
            wasm.write_bytes(shipped.wasm())
            return self.load(wasm, stop)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _store_shipped(self, key: str, shipped: Shipped) -> Component | None:
        """`shipped`'s artifact (compiled elsewhere under `key`) stored in the cache with its memory
        image and loaded,
        or loaded from memory when the cache is not writable; None when it does not load here."""
        data, image = shipped.compiled(), shipped.image()
        if _writable(self._compiled_dir):
            artifact = self._compiled_dir / f"{key}.cwasm"
            store_artifact(artifact, data, image)
            return self._load_pinned(artifact, None)
        try:
            component = Component.deserialize(self.engine, data)
        except WasmtimeError as exc:
            logger.warning("the shipped component %s does not load here (%s)", key, first_line(str(exc)))
            return None
        if image:
            self._images[id(component)] = (component, memory_limit.MappedImage.of(image))
        return component

    def memory_image(self, component: Component) -> bytes:
        """The memory image `component` (from `load`) was compiled with, to ship beside its artifact
        (`runtime.memory_image`); empty when it has none."""
        entry = self._images.get(id(component))
        return os.pread(entry[1].fd, entry[1].size, 0) if entry is not None else b""

    def instantiate(self, store: Store, component: Component) -> Instance:
        """Instantiate `component` (from `load`) in `store` with the linker serving it.

        Raises `WasmtimeError` when the component's imports do not match the host's WIT.
        """
        with self._linkers_lock:
            linked = self._linkers.get(id(component))
            if linked is None:
                linked = self._linkers[id(component)] = _Linked(component, self.engine, self.clock)
        # Instantiations of one component run at once (measured: 8 threads x 60 runs, Python and
        # JavaScript guests): one whose start code runs long holds up no other.
        entry = self._images.get(id(component))
        with memory_limit.imaged(entry[1] if entry is not None else None):
            return linked.linker.instantiate(store, component)

    def _load_or_compile(self, wasm: Path, wasm_size: int, key: str, stop: StopToken | None) -> Component:
        """The artifact for `key` if the cache holds a sound one, else compiled now (with a progress
        line, ~10 s for 18 MB) into the cache, or into a temp folder when the cache is not writable.
        The artifact's `.source` names the wasm it came from; the cache is pruned afterwards."""
        artifact = self._compiled_dir / f"{key}.cwasm"
        cached = self._load_pinned(artifact, wasm)
        if cached is not None:
            return cached
        size = wasm_size / 1e6
        scratch: Path | None = None
        if not _writable(self._compiled_dir):
            scratch = temporary.make("compiled-")
            logger.warning("cannot write the component cache in %s; compiling into %s", self._compiled_dir, scratch)
            artifact = scratch / artifact.name
        what = f"compiling {wasm.name} ({size:.1f} MB) for this machine (once; cached afterwards)"
        try:
            if scratch is not None:
                with progress(what):
                    _compile_in_child(wasm, artifact, stop, what)
                component = self._load_artifact(artifact, None)
            else:
                component = self._compile_in_turn(wasm, artifact, key, stop, what)
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
        if component is None:
            raise ComponentError(f"compiling {wasm} produced no loadable artifact (see the warnings above)")
        if scratch is None:
            cache.auto_prune(self._cache_dir)
        return component

    def _compile_in_turn(
        self, wasm: Path, artifact: Path, key: str, stop: StopToken | None, what: str
    ) -> Component | None:
        """Compile `wasm` into the cache as `artifact`, one process at a time per key (`cache.turn`):
        a process that waited for another's compile loads its artifact instead of compiling again."""
        lock = self._cache_dir / "locks" / f"compile-{key}.lock"
        waiting = f"waiting for another agent-host process {what}"
        with cache.turn(lock, stop.wait if stop is not None else None, lambda: progress(waiting)) as mine:
            if not mine and stop is not None:
                stop.check(what)
            done = self._load_pinned(artifact, wasm)
            if done is not None:
                return done
            with progress(what):
                _compile_in_child(wasm, artifact, stop, what)
            return self._load_pinned(artifact, wasm)

    def _load_pinned(self, artifact: Path, wasm: Path | None) -> Component | None:
        """`_load_artifact`, with `artifact` pinned for the life of the runtime and its `.source`
        (`wasm`, when known) recorded; None (and nothing pinned) when it is missing or unusable."""
        if not cache.pin(artifact):
            return None
        component = self._load_artifact(artifact, self._cache_dir)
        if component is None:
            cache.unpin(artifact)
            return None
        self._pins.append(artifact)
        if wasm is not None and not artifact.with_suffix(cache.contents.SOURCE).exists():
            try:
                cache.record_source(artifact, wasm)
            except OSError as exc:  # a read-only cache still serves its artifacts
                logger.debug("cannot record the source of %s: %s", artifact.name, exc)
        return component

    def _load_artifact(self, artifact: Path, cache_dir: Path | None) -> Component | None:
        """The artifact, deserialized once it and its memory image (`IMAGE`) match the digests of its
        `.sha256` sidecar (each read and hashed only when it changed since the last check: `stamps`,
        in `cache_dir`), the image kept for its instances (`_images`); None when either is missing,
        corrupt or unusable."""
        image_path = artifact.with_suffix(IMAGE)
        try:
            expected = artifact.with_suffix(".sha256").read_text().split()
            checks = [(artifact, "sha256"), (image_path, "image-sha256")]
            actual = [(path, kind, *_digest(path, cache_dir, kind)) for path, kind in checks]
        except OSError:
            return None
        if expected != [digest for *_, digest, _ in actual]:
            logger.warning("compiled component %s is corrupt (hash mismatch); recompiling", artifact.name)
            return None
        for path, kind, digest, recalled in actual:
            if cache_dir is not None and not recalled:
                stamps.record(cache_dir, path, kind, digest)
        try:
            image = memory_limit.MappedImage.open(str(image_path))
        except OSError as exc:
            logger.warning("the memory image of %s cannot be read (%s); recompiling", artifact.name, exc)
            return None
        try:
            component = Component.deserialize_file(self.engine, str(artifact))
        except WasmtimeError as exc:
            logger.warning(
                "compiled component %s cannot be loaded (%s); recompiling", artifact.name, first_line(str(exc))
            )
            if image is not None:
                image.close()
            return None
        if image is not None:
            self._images[id(component)] = (component, image)
        return component

    def _forget(self, component: Component) -> None:
        """Close the memory image of `component`, which `load` refused: nothing may map it again."""
        entry = self._images.pop(id(component), None)
        if entry is not None:
            entry[1].close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ticker.close()
        self._loaded.clear()
        for _, image in self._images.values():
            image.close()
        self._images.clear()
        self._keys.clear()
        self._linkers.clear()
        for path in self._pins:
            cache.unpin(path)
        self._pins.clear()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Linked:
    """A component's linker, every import defined (WASI's monotonic clock served by the host)."""

    def __init__(self, component: Component, engine: Engine, clock: ClockShim) -> None:
        self.component = component
        self.linker = Linker(engine)
        define_imports(self.linker)
        clock.define(self.linker, component, engine)


def cache_key(wasm: bytes) -> str:
    """sha256 of (the wasm's bytes, the wasmtime version, `ENGINE_SETTINGS`, the platform): what a
    serialized artifact is valid for."""
    return key_of(hashlib.sha256(wasm).hexdigest())


def key_of(digest: str) -> str:
    """`cache_key` of the wasm whose sha256 is `digest` (hex)."""
    material = "|".join(
        [
            digest,
            f"wasmtime {WASMTIME_VERSION}",
            ENGINE_SETTINGS,
            platform.machine(),
            sys.platform,
        ]
    )
    return hashlib.sha256(material.encode()).hexdigest()[:40]


def _digest(path: Path, cache_dir: Path | None, kind: str) -> tuple[str, bool]:
    """sha256 of `path` (hex), and whether it was the one recorded in `cache_dir` (`stamps`) for the
    file as it is now (else it was read and hashed). Raises `OSError`."""
    recalled = stamps.recall(cache_dir, path, kind) if cache_dir is not None else None
    if recalled is not None:
        return recalled, True
    return hashlib.sha256(path.read_bytes()).hexdigest(), False


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def _compile_in_child(wasm: Path, artifact: Path, stop: StopToken | None, what: str) -> None:
    """Run `runtime.compiler` on `wasm`; map its exit status to `ComponentError`."""
    command = [sys.executable, "-m", "agent_host.runtime.compiler", str(wasm), str(artifact)]
    status, message = run_child(command, stop, what)
    if status == INVALID_COMPONENT:
        raise ComponentError(
            f"{wasm} is not a WebAssembly component this host can run: {first_line(message)}",
            hint="build it with `agent-host build GUEST_FOLDER` (componentize-py against wit/)",
        )
    if status != 0:
        raise ComponentError(f"compiling {wasm} failed (exit status {status}): {message.strip()[-2000:]}")
