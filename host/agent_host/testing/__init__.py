"""Testing guests with pytest: the `agent_host` fixture (`plugin`) and what it gives a test (`runner`).

Users import `AgentHost` (and the result types, `RunResult` and `RunError`) from `agent_host` (this
package is internal); it is imported on first access, so that loading the plugin at pytest's start
stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_host.testing.runner import AgentHost as AgentHost
__all__ = ("AgentHost",)


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agent_host.testing import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
