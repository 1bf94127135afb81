"""Toolings: the named sources of tools and resources a guest can reach.

Kinds: `mcp` (an MCP server), `python` (host-native Python tools), `mock` (scripted in TOML), each
a module extending `base.ConfiguredTooling`, imported only when a tooling of that kind is created
(`toolset.KINDS`): importing this package does not import the MCP SDK. `ToolingSet` holds the
configured toolings of a process; `Watchers` fans one tooling's changes out to guest subscriptions.
"""

from agent_host.model import CallResult as CallResult
from agent_host.model import ResourceData as ResourceData
from agent_host.model import ResourceSpec as ResourceSpec
from agent_host.model import ToolSpec as ToolSpec
from agent_host.toolings.base import ConfiguredTooling as ConfiguredTooling
from agent_host.toolings.base import ProgressFn as ProgressFn
from agent_host.toolings.base import Tooling as Tooling
from agent_host.toolings.base import connect_timed_out as connect_timed_out
from agent_host.toolings.toolset import KINDS as KINDS
from agent_host.toolings.toolset import ToolingSet as ToolingSet
from agent_host.toolings.watchers import Sink as Sink
from agent_host.toolings.watchers import Watchers as Watchers

__all__ = (
    "KINDS",
    "CallResult",
    "ConfiguredTooling",
    "ProgressFn",
    "ResourceData",
    "ResourceSpec",
    "Sink",
    "ToolSpec",
    "Tooling",
    "ToolingSet",
    "Watchers",
    "connect_timed_out",
)
