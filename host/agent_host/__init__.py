"""agent-host: run AI agents as sandboxed WebAssembly components that reach tools only through
named, granted toolings (MCP servers over stdio or streamable HTTP).

The public API is what this module exports (`__all__`, pinned by tests/unit/project/test_public_api.py):
`Host` and what its methods take and give, the config loaders and models, approvers, the tool API
(`tool`, `ToolContext`, ...), the pytest plugin's types (`AgentHost`, `GuestResult`, `GuestError`),
the errors (`AgentHostError` catches every one) and `ExitCode`. Import them from `agent_host`.
Every submodule (`agent_host.tools`, `agent_host.config`, `agent_host.app`, ...) is internal: it
stays importable, but its names and layout may change in any release. Adding a name here is an API
decision. Names are imported on first use (PEP 562), so `import agent_host` (and the command line's
`--help`) loads neither wasmtime nor the MCP SDK. See README.md for the command line.
"""

from __future__ import annotations

import sys as _sys

if _sys.argv and _sys.argv[0].endswith("agent-host"):  # the console script: a Ctrl-C from now on is quiet
    from agent_host import _interrupts

    _interrupts.install()

import importlib

from agent_host._version import __version__ as __version__

TYPE_CHECKING = False
"""`typing.TYPE_CHECKING` without importing `typing` (~10 ms): this module is the first code of every
`agent-host` command, before the command line can make a Ctrl-C a quiet stop (`agent_host.cli`)."""

if TYPE_CHECKING:
    from typing import Any

    from agent_host.app.host import Host as Host
    from agent_host.components.build import resolve_component as resolve_component
    from agent_host.config import AgentConfig as AgentConfig
    from agent_host.config import Config as Config
    from agent_host.config import ToolingConfig as ToolingConfig
    from agent_host.config import default_config as default_config
    from agent_host.config import load_config as load_config
    from agent_host.config import parse_config as parse_config
    from agent_host.errors import AgentHostError as AgentHostError
    from agent_host.errors import BuildError as BuildError
    from agent_host.errors import ComponentError as ComponentError
    from agent_host.errors import ConfigError as ConfigError
    from agent_host.errors import ErrorCode as ErrorCode
    from agent_host.errors import ExitCode as ExitCode
    from agent_host.errors import HostError as HostError
    from agent_host.errors import Interrupted as Interrupted
    from agent_host.errors import ToolingError as ToolingError
    from agent_host.errors import UsageError as UsageError
    from agent_host.policy.approval import ApprovalRequest as ApprovalRequest
    from agent_host.policy.approval import ApproveAll as ApproveAll
    from agent_host.policy.approval import Approver as Approver
    from agent_host.policy.approval import CallbackApprover as CallbackApprover
    from agent_host.policy.approval import Decision as Decision
    from agent_host.policy.approval import DenyAll as DenyAll
    from agent_host.policy.approval import ElicitationRequest as ElicitationRequest
    from agent_host.policy.grants import AgentPolicy as AgentPolicy
    from agent_host.runtime.guest import GuestThread as GuestThread
    from agent_host.runtime.guest import Outcome as Outcome
    from agent_host.session import GuestSession as GuestSession
    from agent_host.testing import AgentHost as AgentHost
    from agent_host.testing import GuestError as GuestError
    from agent_host.testing import GuestResult as GuestResult
    from agent_host.tools import BaseTool as BaseTool
    from agent_host.tools import FunctionTool as FunctionTool
    from agent_host.tools import Tool as Tool
    from agent_host.tools import ToolContext as ToolContext
    from agent_host.tools import ToolError as ToolError
    from agent_host.tools import tool as tool

_EXPORTS: dict[str, str] = {
    "AgentConfig": "agent_host.config",
    "AgentHost": "agent_host.testing",
    "AgentHostError": "agent_host.errors",
    "AgentPolicy": "agent_host.policy.grants",
    "ApprovalRequest": "agent_host.policy.approval",
    "ApproveAll": "agent_host.policy.approval",
    "Approver": "agent_host.policy.approval",
    "BaseTool": "agent_host.tools",
    "BuildError": "agent_host.errors",
    "CallbackApprover": "agent_host.policy.approval",
    "ComponentError": "agent_host.errors",
    "Config": "agent_host.config",
    "ConfigError": "agent_host.errors",
    "Decision": "agent_host.policy.approval",
    "DenyAll": "agent_host.policy.approval",
    "ElicitationRequest": "agent_host.policy.approval",
    "ErrorCode": "agent_host.errors",
    "ExitCode": "agent_host.errors",
    "FunctionTool": "agent_host.tools",
    "GuestError": "agent_host.testing",
    "GuestResult": "agent_host.testing",
    "GuestSession": "agent_host.session",
    "GuestThread": "agent_host.runtime.guest",
    "Host": "agent_host.app.host",
    "HostError": "agent_host.errors",
    "Interrupted": "agent_host.errors",
    "Outcome": "agent_host.runtime.guest",
    "Tool": "agent_host.tools",
    "ToolContext": "agent_host.tools",
    "ToolError": "agent_host.tools",
    "ToolingConfig": "agent_host.config",
    "ToolingError": "agent_host.errors",
    "UsageError": "agent_host.errors",
    "default_config": "agent_host.config",
    "load_config": "agent_host.config",
    "parse_config": "agent_host.config",
    "resolve_component": "agent_host.components.build",
    "tool": "agent_host.tools",
}
"""Public name -> the module it is imported from on first use."""

__all__ = (
    "AgentConfig",
    "AgentHost",
    "AgentHostError",
    "AgentPolicy",
    "ApprovalRequest",
    "ApproveAll",
    "Approver",
    "BaseTool",
    "BuildError",
    "CallbackApprover",
    "ComponentError",
    "Config",
    "ConfigError",
    "Decision",
    "DenyAll",
    "ElicitationRequest",
    "ErrorCode",
    "ExitCode",
    "FunctionTool",
    "GuestError",
    "GuestResult",
    "GuestSession",
    "GuestThread",
    "Host",
    "HostError",
    "Interrupted",
    "Outcome",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolingConfig",
    "ToolingError",
    "UsageError",
    "__version__",
    "default_config",
    "load_config",
    "parse_config",
    "resolve_component",
    "tool",
)


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it as a module attribute."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
