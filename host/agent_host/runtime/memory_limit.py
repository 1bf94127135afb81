"""Guests' linear memories, allocated by the host so that the host knows when it refused a growth.

wasmtime's store limiter (`Store.set_limits`) refuses a `memory.grow` over the limit silently: the
guest sees -1 and only its own text (a `MemoryError` traceback, an `Err("out of memory")`) would
tell. So the engine gets this module's memory creator (`install`): every linear memory is reserved
as wasmtime asks (its reservation and guard, `PROT_NONE`, made readable and writable as it grows)
and the limit is enforced here, by the `MemoryBudget` active on the thread that creates the memory
(`active`, entered by the guest runner around instantiation and `run`). A creation or growth over
the limit fails (the guest sees a failed `memory.grow`, as with the store limiter) and is recorded in
the budget: host state, which the runner reports as the memory limit whatever the guest says.
A memory made with no budget active (the host's own adapter components) has no limit here. A
component whose memory image was taken out of it (`memory_image`) has the image mapped
copy-on-write into each memory made while `imaged` names it (`Runtime.instantiate`).

wasmtime maps memory images copy-on-write only into memories it allocates itself, so this needs
`memory_init_cow` off (`compiler.engine_config`; part of `ENGINE_SETTINGS`). wasmtime-py has no
public creator API: `install` goes through `wasmtime_hooks`, and returns False where that hook is
unavailable; the runner then falls back to the store limiter: the memory stays bounded, and a trap
is then never reported as the memory limit. Callbacks run on wasmtime's threads and never raise
into it. Longer: the contract with wasmtime (reservation, guard, copy-on-write) is one piece.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import mmap
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from wasmtime import Config

from agent_host.runtime import wasmtime_hooks

logger = logging.getLogger(__name__)

MAX_RESERVATION: Final = 1 << 32
"""Bytes reserved for a memory when wasmtime asks for no reservation of its own (a 32-bit memory's
whole address space); growth past the reservation fails."""

_PROT_NONE: Final = 0
_PROT_READ_WRITE: Final = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FLAGS: Final = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
_MAP_FAILED: Final = ctypes.c_void_p(-1).value
_MAP_FIXED: Final = getattr(mmap, "MAP_FIXED", 0x10)  # Python 3.11's mmap has no MAP_FIXED; 0x10 on Linux and macOS

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
    guest's word). The limit applies to all the run's linear memories together: a component of many
    memories cannot hold many times the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.refused: Refusal | None = None
        """The first refusal; None while every creation and growth fit."""
        self.refusals = 0
        self.total = 0
        """Bytes the run's linear memories hold now, together."""
        self.peak = 0
        """The most bytes the run's linear memories held together."""
        self._lock = threading.Lock()

    def _admit(self, size: int, asked: int) -> bool:
        """Whether a memory of `size` bytes (0: a new one) may hold `asked` bytes; counted when it may."""
        with self._lock:
            total = self.total - size + asked
            if total <= self.limit:
                self.total = total
                self.peak = max(self.peak, total)
                return True
            self.refusals += 1
            if self.refused is None:
                self.refused = Refusal(size, asked)
            return False

    def _released(self, size: int) -> None:
        with self._lock:
            self.total -= size


class MappedImage:
    """A memory image (`memory_image.Image.data`) in a file the creator maps copy-on-write: the cache's
    `.image` file, or a memfd for an image with no file. Held open for the life of the runtime."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    @classmethod
    def open(cls, path: str) -> MappedImage | None:
        """The image in the file at `path`; None for an empty file (a component with no image).
        Raises `OSError` when it cannot be read."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        size = os.fstat(fd).st_size
        if size == 0 or size % mmap.PAGESIZE:
            os.close(fd)
            if size:
                raise OSError(f"memory image {path} is {size} bytes, not a whole number of pages")
            return None
        return cls(fd, size)

    @classmethod
    def of(cls, data: bytes) -> MappedImage:
        """`data` (whole pages) in an anonymous file."""
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("agent-host-image", os.MFD_CLOEXEC)
        else:  # pragma: no cover - macOS: an unlinked temporary file
            fd, name = tempfile.mkstemp(prefix="agent-host-image-")
            os.unlink(name)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            os.close(fd)
            raise
        return cls(fd, len(data))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


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


@contextlib.contextmanager
def imaged(image: MappedImage | None) -> Iterator[None]:
    """Map `image` into every memory created on this thread while the block runs (the instantiation
    of a component whose image it is: such a component defines one memory, `memory_image`)."""
    previous = getattr(_active, "image", None)
    _active.image = image
    try:
        yield
    finally:
        _active.image = previous


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


class _Creator:
    """The host's `wasmtime_hooks.MemoryCreator`: memories reserved with `mmap`, limited by the
    budget active on the creating thread."""

    def new_memory(self, minimum: int, maximum: int, reserved: int, guard: int) -> int | str:
        global _next_key
        budget: MemoryBudget | None = getattr(_active, "budget", None)
        if budget is not None and not budget._admit(0, minimum):
            return f"memory limit: {minimum} bytes more needed at instantiation, the limit is {budget.limit} in all"
        reservation = reserved or max(minimum, min(maximum, MAX_RESERVATION))
        mapped = reservation + guard
        base = _libc.mmap(None, mapped, _PROT_NONE, _MAP_FLAGS, -1, 0)
        if base is None or base == _MAP_FAILED:
            return f"cannot reserve {mapped} bytes for a linear memory: errno {ctypes.get_errno()}"
        if minimum and _libc.mprotect(base, minimum, _PROT_READ_WRITE) != 0:
            _libc.munmap(base, mapped)
            return f"mprotect failed: errno {ctypes.get_errno()}"
        image: MappedImage | None = getattr(_active, "image", None)
        if image is not None:
            failed = _map_image(base, minimum, image)
            if failed is not None:
                _libc.munmap(base, mapped)
                return failed
        with _memories_lock:
            key = _next_key
            _next_key += 1
            _memories[key] = _Memory(base, minimum, reservation, mapped, budget)
        return key

    def get_memory(self, key: int) -> tuple[int, int, int] | None:
        memory = _memories.get(key)
        if memory is None:  # never: wasmtime asks only for memories it holds
            logger.error("wasmtime asked for linear memory %r, which is not allocated", key)
            return None
        return memory.base, memory.size, memory.reserved

    def grow_memory(self, key: int, new_size: int) -> str | None:
        memory = _memories[key]
        if memory.budget is not None and not memory.budget._admit(memory.size, new_size):
            return f"memory limit: {new_size} bytes asked, the limit is {memory.budget.limit} for all memories"
        if new_size > memory.reserved:
            return f"a linear memory cannot grow past its reservation of {memory.reserved} bytes"
        if new_size > memory.size:
            grown = new_size - memory.size
            if _libc.mprotect(memory.base + memory.size, grown, _PROT_READ_WRITE) != 0:
                return f"mprotect failed: errno {ctypes.get_errno()}"
            memory.size = new_size
        return None

    def release(self, key: int) -> None:
        with _memories_lock:
            memory = _memories.pop(key, None)
        if memory is not None:
            _libc.munmap(memory.base, memory.mapped)
            if memory.budget is not None:
                memory.budget._released(memory.size)


def _map_image(base: int, minimum: int, image: MappedImage) -> str | None:
    """Map `image` copy-on-write at the start of the memory at `base` (of `minimum` bytes)."""
    if image.size > minimum:
        return f"the memory image ({image.size} bytes) is larger than the memory ({minimum} bytes)"
    flags = mmap.MAP_PRIVATE | _MAP_FIXED
    if _libc.mmap(base, image.size, _PROT_READ_WRITE, flags, image.fd, 0) in (None, _MAP_FAILED):
        return f"cannot map the memory image: errno {ctypes.get_errno()}"
    return None


_CREATOR: Final = _Creator()


def install(config: Config) -> bool:
    """Make `config`'s engines allocate linear memories here (and turn `memory_init_cow` off, which
    that requires). False, with `config` unchanged, when the `memory_creator` hook of
    `wasmtime_hooks` is unavailable."""
    return wasmtime_hooks.install_memory_creator(config, _CREATOR)


INSTALLED_BY_DEFAULT: Final = wasmtime_hooks.UNAVAILABLE["memory_creator"] is None  # `install` logs why not
"""Whether `compiler.engine_config` installs the creator (so the runner relies on budgets)."""
