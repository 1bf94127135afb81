"""Guests' linear memories, allocated by the host so that the host knows when it refused a growth.

wasmtime's store limiter (`Store.set_limits`) refuses a `memory.grow` over the limit silently: the
guest sees -1 and only its own text (a `MemoryError` traceback, an `Err("out of memory")`) would
tell. So the engine gets this module's memory creator (`install`): every linear memory is reserved
as wasmtime asks (its reservation and guard, `PROT_NONE`, made readable and writable as it grows)
and the limit is enforced here, by the `MemoryBudget` active on the thread that creates the memory
(`active`, entered by the guest runner around instantiation and `run`). A creation or growth over
the limit fails (the guest sees a failed `memory.grow`, as with the store limiter) and is recorded in
the budget: host state, which the runner reports as the memory limit whatever the guest says.
A memory made with no budget active (the host's own adapter components) has no limit here.

wasmtime maps memory images copy-on-write only into memories it allocates itself, so this needs
`memory_init_cow` off (`compiler.engine_config`; part of `ENGINE_SETTINGS`). When the wasmtime
binding lacks the creator API, `install` returns False and the runner falls back to the store
limiter: the memory stays bounded, and a trap is then never reported as the memory limit.
Callbacks run on wasmtime's threads and never raise into it. Longer: the contract with wasmtime
(reservation, guard, copy-on-write) is one piece.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import mmap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from wasmtime import Config, WasmtimeError
from wasmtime import _bindings as ffi  # the memory-creator API wasmtime-py does not wrap

logger = logging.getLogger(__name__)

MAX_RESERVATION: Final = 1 << 32
"""Bytes reserved for a memory when wasmtime asks for no reservation of its own (a 32-bit memory's
whole address space); growth past the reservation fails."""

_PROT_NONE: Final = 0
_PROT_READ_WRITE: Final = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FLAGS: Final = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
_MAP_FAILED: Final = ctypes.c_void_p(-1).value

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mprotect.restype = ctypes.c_int
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


@dataclass
class Refusal:
    """A creation or growth of a linear memory that the limit refused."""

    size: int
    """Bytes the memory had (0 for a creation)."""
    asked: int
    """Bytes it was to have."""


class MemoryBudget:
    """The memory limit of one guest run, and what the host refused it (host state, never the
    guest's word). The limit applies to each linear memory, as the store limiter's does."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.refused: Refusal | None = None
        """The first refusal; None while every creation and growth fit."""
        self.refusals = 0
        self.peak = 0
        """The largest size a memory of the run reached (bytes)."""

    def _admit(self, size: int, asked: int) -> bool:
        if asked <= self.limit:
            self.peak = max(self.peak, asked)
            return True
        self.refusals += 1
        if self.refused is None:
            self.refused = Refusal(size, asked)
        return False


_active = threading.local()


@contextlib.contextmanager
def active(budget: MemoryBudget) -> Iterator[MemoryBudget]:
    """Make `budget` the limit of every memory created on this thread while the block runs."""
    previous = getattr(_active, "budget", None)
    _active.budget = budget
    try:
        yield budget
    finally:
        _active.budget = previous


@dataclass
class _Memory:
    base: int
    size: int
    reserved: int
    mapped: int
    budget: MemoryBudget | None


_memories: dict[int, _Memory] = {}
_memories_lock = threading.Lock()
_next_key = 1


def _error(message: str) -> int:
    """A new `wasmtime_error_t*` (as an int) that wasmtime takes ownership of."""
    pointer: int = ctypes.cast(WasmtimeError(message)._consume(), ctypes.c_void_p).value or 0
    return pointer


def _get_memory(env: Any, byte_size: Any, byte_capacity: Any) -> int:
    try:
        memory = _memories[env]
    except KeyError:  # never: wasmtime asks only for memories it holds
        logger.error("wasmtime asked for linear memory %r, which is not allocated", env)
        return 0
    byte_size[0] = memory.size
    byte_capacity[0] = memory.reserved
    return memory.base


def _grow_memory(env: Any, new_size: int) -> int:
    try:
        memory = _memories[env]
        if memory.budget is not None and not memory.budget._admit(memory.size, new_size):
            return _error(f"memory limit: {new_size} bytes asked, the limit is {memory.budget.limit}")
        if new_size > memory.reserved:
            return _error(f"a linear memory cannot grow past its reservation of {memory.reserved} bytes")
        if new_size > memory.size:
            grown = new_size - memory.size
            if _libc.mprotect(memory.base + memory.size, grown, _PROT_READ_WRITE) != 0:
                return _error(f"mprotect failed: errno {ctypes.get_errno()}")
            memory.size = new_size
        return 0
    except BaseException as exc:  # boundary: nothing may unwind into wasmtime's frames
        return _error(f"host error growing a linear memory: {exc!r}")


def _release(env: Any) -> None:
    try:
        with _memories_lock:
            memory = _memories.pop(env, None)
        if memory is not None:
            _libc.munmap(memory.base, memory.mapped)
    except BaseException:  # boundary: nothing may unwind into wasmtime's frames
        logger.exception("releasing a linear memory")


def _new_memory(env: Any, ty: Any, minimum: int, maximum: int, reserved: int, guard: int, memory_ret: Any) -> int:
    global _next_key
    try:
        budget: MemoryBudget | None = getattr(_active, "budget", None)
        if budget is not None and not budget._admit(0, minimum):
            return _error(f"memory limit: {minimum} bytes needed at instantiation, the limit is {budget.limit}")
        reservation = reserved or max(minimum, min(maximum, MAX_RESERVATION))
        mapped = reservation + guard
        base = _libc.mmap(None, mapped, _PROT_NONE, _MAP_FLAGS, -1, 0)
        if base is None or base == _MAP_FAILED:
            return _error(f"cannot reserve {mapped} bytes for a linear memory: errno {ctypes.get_errno()}")
        if minimum and _libc.mprotect(base, minimum, _PROT_READ_WRITE) != 0:
            _libc.munmap(base, mapped)
            return _error(f"mprotect failed: errno {ctypes.get_errno()}")
        with _memories_lock:
            key = _next_key
            _next_key += 1
            _memories[key] = _Memory(base, minimum, reservation, mapped, budget)
        result = memory_ret[0]
        result.env = key
        result.get_memory = _GET
        result.grow_memory = _GROW
        result.finalizer = _RELEASE
        return 0
    except BaseException as exc:  # boundary: nothing may unwind into wasmtime's frames
        return _error(f"host error creating a linear memory: {exc!r}")


def _no_finalizer(env: Any) -> None:
    return None


_AVAILABLE: Final = all(
    hasattr(ffi, name)
    for name in (
        "wasmtime_config_host_memory_creator_set",
        "wasmtime_config_memory_init_cow_set",
        "wasmtime_memory_creator_t",
        "wasmtime_new_memory_callback_t",
        "wasmtime_memory_get_callback_t",
        "wasmtime_memory_grow_callback_t",
    )
)
"""Whether this wasmtime binding has the memory-creator API (wasmtime-py 50 has)."""

if _AVAILABLE:
    _FINALIZER_TYPE: Any = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    _GET: Any = ffi.wasmtime_memory_get_callback_t(_get_memory)
    _GROW: Any = ffi.wasmtime_memory_grow_callback_t(_grow_memory)
    _RELEASE: Any = _FINALIZER_TYPE(_release)
    _NEW: Any = ffi.wasmtime_new_memory_callback_t(_new_memory)
    _NO_FINALIZER: Any = _FINALIZER_TYPE(_no_finalizer)
    """The ctypes callbacks, alive for the life of the process (engines copy pointers to them)."""


def install(config: Config) -> bool:
    """Make `config`'s engines allocate linear memories here (and turn `memory_init_cow` off, which
    that requires). False, with `config` unchanged, when the binding lacks the API."""
    if not _AVAILABLE:
        return False
    creator = ffi.wasmtime_memory_creator_t()
    creator.new_memory = _NEW
    creator.finalizer = _NO_FINALIZER
    ffi.wasmtime_config_memory_init_cow_set(config.ptr(), False)
    ffi.wasmtime_config_host_memory_creator_set(config.ptr(), ctypes.byref(creator))  # copied by wasmtime
    return True


INSTALLED_BY_DEFAULT: Final = _AVAILABLE
"""Whether `compiler.engine_config` installs the creator (so the runner relies on budgets)."""
