"""agent-host: run AI agents as sandboxed WebAssembly components that reach tools only through
named, granted toolings (MCP servers over stdio or streamable HTTP).

The public API is what this module exports; everything else is internal. Adding a name here is an
API decision. Names are imported on first use (PEP 562), so `import agent_host` (and the command line's
`--help`) loads neither wasmtime nor the MCP SDK. See README.md for the command line.
"""

from __future__ import annotations

import importlib

from agent_host._version import __version__ as __version__

TYPE_CHECKING = False
"""`typing.TYPE_CHECKING` without importing `typing` (~10 ms): this module is the first code of every
`agent-host` command, before the command line can make a Ctrl-C a quiet stop (`agent_host.cli`)."""

if TYPE_CHECKING:
    from typing import Any

    from agent_host.app.host import Host as Host
    from agent_host.config import AgentConfig as AgentConfig
    from agent_host.config import Config as Config
    from agent_host.config import ToolingConfig as ToolingConfig
    from agent_host.config import default_config as default_config
    from agent_host.config import load_config as load_config
    from agent_host.errors import ErrorCode as ErrorCode
    from agent_host.errors import HostError as HostError
    from agent_host.errors import ToolingError as ToolingError
    from agent_host.runtime.guest import Outcome as Outcome

_EXPORTS: dict[str, str] = {
    "AgentConfig": "agent_host.config",
    "Config": "agent_host.config",
    "ErrorCode": "agent_host.errors",
    "Host": "agent_host.app.host",
    "HostError": "agent_host.errors",
    "Outcome": "agent_host.runtime.guest",
    "ToolingConfig": "agent_host.config",
    "ToolingError": "agent_host.errors",
    "default_config": "agent_host.config",
    "load_config": "agent_host.config",
}
"""Public name -> the module that defines it."""

__all__ = (
    "AgentConfig",
    "Config",
    "ErrorCode",
    "Host",
    "HostError",
    "Outcome",
    "ToolingConfig",
    "ToolingError",
    "__version__",
    "default_config",
    "load_config",
)


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it as a module attribute."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'host' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
