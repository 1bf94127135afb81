"""`ToolingSet`: the configured toolings of one host process, and the table of tooling kinds.

Toolings are created on first use on the bridge loop (anyio primitives must be created there) and
shared by every guest of the process. `aclose` closes every tooling concurrently (closing a stdio
server takes ~0.5 s; in sequence that adds up).

Kinds are registered in `KINDS`, each by a factory that imports its module when first called: a
process that uses no MCP tooling never imports the MCP SDK (~0.5 s). A new kind is one module
extending `base.ConfiguredTooling`, plus one factory and one line in `KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from agent_host._support.rotation import SERVER_LOG_BOUNDS, LogBounds
from agent_host.config import (
    HttpToolingConfig,
    MockToolingConfig,
    PythonToolingConfig,
    StdioToolingConfig,
    ToolingConfig,
)
from agent_host.errors import ErrorCode, ToolingError
from agent_host.toolings.base import Tooling
from agent_host.toolings.server_requests import DeclineAll, ServerRequests
from agent_host.toolings.watchers import Watchers


@dataclass(frozen=True)
class Surroundings:
    """What the host process gives every tooling: the loop's long-lived task group (connection
    owners, refresh tasks), the folder for server logs, and who answers servers' requests."""

    nursery: TaskGroup
    log_dir: Path
    requests: ServerRequests
    server_log: LogBounds
    """How far each stdio server's stderr log may grow."""


def _mcp(config: StdioToolingConfig | HttpToolingConfig, around: Surroundings) -> Tooling:
    from agent_host.toolings.mcp.tooling import McpTooling  # lazily: imports the MCP SDK

    return McpTooling(
        config, nursery=around.nursery, log_dir=around.log_dir, requests=around.requests, log_bounds=around.server_log
    )


def _python(config: PythonToolingConfig, around: Surroundings) -> Tooling:
    from agent_host.toolings.python import PythonTooling

    return PythonTooling(config)


def _mock(config: MockToolingConfig, around: Surroundings) -> Tooling:
    from agent_host.toolings.mock import MockTooling

    return MockTooling(config, nursery=around.nursery)


KINDS: Final[Mapping[str, Callable[[Any, Surroundings], Tooling]]] = {
    "mcp": _mcp,
    "python": _python,
    "mock": _mock,
}
"""Tooling kind (`kind = ...` in the config) → factory. Each factory takes its own config model; the
config's discriminated union guarantees that `kind` selects that model, hence `Any` here."""


class ToolingSet:
    """The configured toolings of one host process. Use only on the bridge loop."""

    def __init__(
        self,
        configs: Mapping[str, ToolingConfig],
        *,
        nursery: TaskGroup,
        log_dir: Path,
        requests: ServerRequests | None = None,
        server_log: LogBounds = SERVER_LOG_BOUNDS,
    ) -> None:
        """`requests` answers the servers' requests (default: `DeclineAll`); `server_log` bounds each
        stdio server's stderr log."""
        self._configs = dict(configs)
        self._nursery = nursery
        answers = requests if requests is not None else DeclineAll()
        self._surroundings = Surroundings(nursery, log_dir, answers, server_log)
        self._toolings: dict[str, Tooling] = {}
        self._watchers: dict[str, Watchers] = {}

    @property
    def names(self) -> list[str]:
        return sorted(self._configs)

    def config(self, name: str) -> ToolingConfig:
        """The configuration of tooling `name`; `not-found` naming the configured ones otherwise."""
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
            config = self.config(name)
            tooling = KINDS[config.kind](config, self._surroundings)
            self._toolings[name] = tooling
            self._watchers[name] = Watchers(tooling, self._nursery)
        return tooling

    def watchers(self, name: str) -> Watchers:
        """The shared subscriptions of tooling `name` (created with it)."""
        self.get(name)
        return self._watchers[name]

    async def connect(self, name: str) -> Tooling:
        """The tooling called `name`, connected (see `Tooling.connect`)."""
        tooling = self.get(name)
        await tooling.connect()
        return tooling

    async def aclose(self) -> None:
        """Close every tooling created so far, concurrently."""
        async with anyio.create_task_group() as tg:
            for tooling in self._toolings.values():
                tg.start_soon(tooling.aclose)
