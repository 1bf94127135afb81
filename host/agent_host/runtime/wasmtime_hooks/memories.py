"""The memory creator (`install_memory_creator`): the host allocates linear memories itself."""

from __future__ import annotations

import ctypes
import logging
from typing import Any, Protocol

from wasmtime import Config

from agent_host.runtime.wasmtime_hooks.checks import available, error_pointer, ffi, no_finalizer

logger = logging.getLogger(__name__)

# -- the memory creator (no public path in wasmtime-py 50) -------------------------------------


class MemoryCreator(Protocol):
    """Allocates the linear memories of every engine made from a `Config` it was installed on.
    Called on wasmtime's threads; must not raise (an exception becomes the error it returns)."""

    def new_memory(self, minimum: int, maximum: int, reserved: int, guard: int) -> int | str:
        """A new memory of `minimum` bytes (at most `maximum`; `reserved` bytes reserved, 0: the
        creator's choice; `guard` bytes of guard after the reservation): its key, or why not."""
        ...

    def get_memory(self, key: int) -> tuple[int, int, int] | None:
        """(base address, size, reserved capacity) in bytes of memory `key`; None if unknown."""
        ...

    def grow_memory(self, key: int, new_size: int) -> str | None:
        """Grow memory `key` to `new_size` bytes: None when done, else why not (the guest sees a
        failed `memory.grow`)."""
        ...

    def release(self, key: int) -> None:
        """Memory `key` is no longer used."""
        ...


class _CreatorCallbacks:
    """The ctypes callbacks of one `MemoryCreator` (alive for the process: engines copy pointers)."""

    def __init__(self, creator: MemoryCreator) -> None:
        self.creator = creator
        finalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        self.get = ffi.wasmtime_memory_get_callback_t(self._get)
        self.grow = ffi.wasmtime_memory_grow_callback_t(self._grow)
        self.release = finalizer(self._release)
        self.new = ffi.wasmtime_new_memory_callback_t(self._new)
        self.no_finalizer = finalizer(no_finalizer)

    def _new(self, env: Any, ty: Any, minimum: int, maximum: int, reserved: int, guard: int, memory_ret: Any) -> int:
        try:
            made = self.creator.new_memory(minimum, maximum, reserved, guard)
            if isinstance(made, str):
                return error_pointer(made)
            result = memory_ret[0]
            result.env = made
            result.get_memory = self.get
            result.grow_memory = self.grow
            result.finalizer = self.release
            return 0
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's frames
            return error_pointer(f"host error creating a linear memory: {exc!r}")

    def _get(self, env: Any, byte_size: Any, byte_capacity: Any) -> int:
        try:
            found = self.creator.get_memory(env or 0)
        except BaseException:  # boundary: nothing may unwind into wasmtime's frames
            logger.exception("reading linear memory %r", env)
            found = None
        if found is None:
            return 0
        base, size, capacity = found
        byte_size[0] = size
        byte_capacity[0] = capacity
        return base

    def _grow(self, env: Any, new_size: int) -> int:
        try:
            refused = self.creator.grow_memory(env or 0, new_size)
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's frames
            refused = f"host error growing a linear memory: {exc!r}"
        return 0 if refused is None else error_pointer(refused)

    def _release(self, env: Any) -> None:
        try:
            self.creator.release(env or 0)
        except BaseException:  # boundary: nothing may unwind into wasmtime's frames
            logger.exception("releasing a linear memory")


_creators: dict[int, _CreatorCallbacks] = {}


def install_memory_creator(config: Config, creator: MemoryCreator) -> bool:
    """Make `config`'s engines allocate linear memories with `creator` (and turn `memory_init_cow`
    off, which that requires: wasmtime maps images copy-on-write only into memories it allocates).
    False, with `config` unchanged, when the `memory_creator` hook is unavailable."""
    if not available("memory_creator"):
        return False
    callbacks = _creators.get(id(creator))
    if callbacks is None:
        callbacks = _creators[id(creator)] = _CreatorCallbacks(creator)
    c_creator = ffi.wasmtime_memory_creator_t()
    c_creator.new_memory = callbacks.new
    c_creator.finalizer = callbacks.no_finalizer
    ffi.wasmtime_config_memory_init_cow_set(config.ptr(), False)
    ffi.wasmtime_config_host_memory_creator_set(config.ptr(), ctypes.byref(c_creator))  # copied by wasmtime
    return True
