"""The one door to wasmtime-py's internals: every private name of wasmtime-py the host uses is used here.

wasmtime-py 50 makes host calls slow (it re-reads a function's types through the C API at every
call) and does not wrap two C APIs the runtime needs. Each of the three hooks below is checked at
import: the names, ctypes signatures and structure fields it relies on, and the installed wasmtime
against `TESTED_VERSIONS`. A hook found unusable is logged once at debug with why, and the rest of
the runtime takes the public path instead (slower or coarser, never wrong):

- `host_functions`: `add_func` registers a host function through our own trampoline, its types
  read once into codecs (plain Python data: `codec`); `borrowed_rep` reads a borrow's rep without an
  intermediate object. Public path: `LinkerInstance.add_func` (types re-read at every call) and
  `ResourceAny.to_host(store).rep`.
- `epoch_callback`: `watch_epochs` registers wasmtime's epoch-deadline callback, so a run's limits
  and stops are checked every slice and the run resumes. No public path in wasmtime-py: only
  `Store.set_epoch_deadline`, whose deadline traps for good (`runtime.run_guard` then arms the
  nearer limit).
- `memory_creator`: `install_memory_creator` lets the host allocate linear memories, so it knows
  when it refused a growth. No public path in wasmtime-py: the store limiter (`Store.set_limits`,
  which refuses silently; `runtime.memory_limit`).

With the public `LinkerInstance.add_func`, a value a host function returns that does not fit its
WIT type (a host bug) reaches the caller of the export as that Python exception, through
wasmtime-py's process-global slot, instead of trapping the guest with it.

Invariants: nothing raised in a callback unwinds into wasmtime's C frames (it becomes the
`WasmtimeError` that traps the guest); every ctypes callback lives as long as wasmtime may call it;
no other module of the package names a private module or attribute of wasmtime-py
(`tests/unit/runtime/test_wasmtime_hooks.py` and an import-linter contract check it). One module
per hook (`host_functions` with its `codecs`, `epochs`, `memories`), their checks in `checks`.
Longer: the table of hooks and their public paths is this module's contract with the runtime.
"""

from __future__ import annotations

from agent_host.runtime.wasmtime_hooks.checks import (
    HOOKS,
    TESTED_VERSIONS,
    UNAVAILABLE,
    WASMTIME_VERSION,
    Hook,
    available,
    bindings,
    ffi,
)
from agent_host.runtime.wasmtime_hooks.codecs import Codec, codec, new_component_value
from agent_host.runtime.wasmtime_hooks.epochs import EpochCallback, EpochWatch, watch_epochs
from agent_host.runtime.wasmtime_hooks.host_functions import HostFn, add_func, borrowed_rep
from agent_host.runtime.wasmtime_hooks.memories import MemoryCreator, install_memory_creator

__all__ = (
    "HOOKS",
    "TESTED_VERSIONS",
    "UNAVAILABLE",
    "WASMTIME_VERSION",
    "Codec",
    "EpochCallback",
    "EpochWatch",
    "Hook",
    "HostFn",
    "MemoryCreator",
    "add_func",
    "available",
    "bindings",
    "borrowed_rep",
    "codec",
    "ffi",
    "install_memory_creator",
    "new_component_value",
    "watch_epochs",
)
