"""Toolings: the named sources of tools and resources a guest can reach.

`ToolingSet` maps configured names to tooling objects, created on first use on the bridge loop
(anyio primitives must be created there) and shared by every guest of the process. `aclose`
closes every tooling concurrently (closing a stdio server takes ~0.5 s; in sequence that adds up).

Kinds: `mcp` (an MCP server), `python` (host-native Python tools), `mock` (scripted in TOML). A new
kind is one new module here implementing `base.Tooling`, plus one line in `_create`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from host.config import ToolingConfig
from host.errors import ErrorCode, ToolingError
from host.toolings.base import CallResult, ResourceData, ResourceSpec, Tooling, ToolSpec
from host.toolings.mcp import McpTooling
from host.toolings.mock import MockTooling
from host.toolings.python import PythonTooling
from host.toolings.watchers import Sink, Watchers

__all__ = (
    "CallResult",
    "ResourceData",
    "ResourceSpec",
    "ToolSpec",
    "Tooling",
    "ToolingSet",
    "Watchers",
    "Sink",
)


class ToolingSet:
    """The configured toolings of one host process. Use only on the bridge loop."""

    def __init__(self, configs: Mapping[str, ToolingConfig], *, nursery: TaskGroup, log_dir: Path) -> None:
        self._configs = dict(configs)
        self._nursery = nursery
        self._log_dir = log_dir
        self._toolings: dict[str, Tooling] = {}
        self._watchers: dict[str, Watchers] = {}

    @property
    def names(self) -> list[str]:
        return sorted(self._configs)

    def config(self, name: str) -> ToolingConfig:
        try:
            return self._configs[name]
        except KeyError:
            raise ToolingError(
                ErrorCode.NOT_FOUND,
                f"no tooling named {name!r} is configured; configured: {', '.join(self.names) or '(none)'}",
            ) from None

    def get(self, name: str) -> Tooling:
        """The tooling called `name`, created (not connected) on first use."""
        tooling = self._toolings.get(name)
        if tooling is None:
            tooling = self._create(self.config(name))
            self._toolings[name] = tooling
            self._watchers[name] = Watchers(tooling, self._nursery)
        return tooling

    def watchers(self, name: str) -> Watchers:
        """The shared subscriptions of tooling `name` (created with it)."""
        self.get(name)
        return self._watchers[name]

    async def connect(self, name: str) -> Tooling:
        tooling = self.get(name)
        await tooling.connect()
        return tooling

    def _create(self, config: ToolingConfig) -> Tooling:
        if config.kind == "python":
            return PythonTooling(config)
        if config.kind == "mock":
            return MockTooling(config, nursery=self._nursery)
        return McpTooling(config, nursery=self._nursery, log_dir=self._log_dir)

    async def aclose(self) -> None:
        async with anyio.create_task_group() as tg:
            for tooling in self._toolings.values():
                tg.start_soon(tooling.aclose)
