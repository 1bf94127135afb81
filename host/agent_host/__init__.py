"""agent-host: run AI agents as sandboxed WebAssembly components that reach tools only through
named, granted toolings (MCP servers over stdio or streamable HTTP).

The public API is what `__init__.pyi` lists, each name once with the module it comes from: type
checkers read it, and this module serves each name on first use (PEP 562), so `import agent_host`
(and the command line's `--help`) loads neither wasmtime nor the MCP SDK. Every submodule is
internal: it stays importable, but its names and layout may change in any release. Names of earlier
releases (`RENAMED`) still resolve, with a `DeprecationWarning`. See README.md for the command line.
"""

from __future__ import annotations

import sys as _sys

if _sys.argv and _sys.argv[0].endswith("agent-host"):  # the console script: a Ctrl-C from now on is quiet
    from agent_host import _interrupts

    _interrupts.install()

import importlib
import os
import warnings

from agent_host._version import __version__ as __version__

RENAMED: dict[str, tuple[str, str]] = {
    "Outcome": ("agent_host", "RunResult"),
    "GuestResult": ("agent_host", "RunResult"),
    "GuestError": ("agent_host", "RunError"),
    "GuestSession": ("agent_host.session", "GuestSession"),
}
"""Names of earlier releases -> (module, name) serving them now; `GuestSession` became internal
(`Host.tooling` is the API for calling toolings from Python)."""


def _exports() -> dict[str, str]:
    """Public name -> its module, from the `from MODULE import NAME as NAME` lines of `__init__.pyi`."""
    stub = os.path.join(os.path.dirname(__file__), "__init__.pyi")
    with open(stub, encoding="utf-8") as file:
        lines = [line.split() for line in file if line.startswith("from agent_host")]
    return {words[3]: words[1] for words in lines if len(words) == 6 and words[2] == "import" and words[4] == "as"}


_EXPORTS = _exports()
__all__ = tuple(sorted(_EXPORTS))


def __getattr__(name: str) -> object:
    """Import a public name on first use and keep it as a module attribute."""
    module = _EXPORTS.get(name)
    if module is None:
        if name not in RENAMED:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, new = RENAMED[name]
        where = "internal now: use Host.tooling" if name == new else f"renamed {new}"
        warnings.warn(f"agent_host.{name} is {where}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), new)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
