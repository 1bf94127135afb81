"""`Catalog`: everything `agent-host serve` offers, behind one interface for MCP and the HTTP API.

It holds the offered agents (`agents.AgentCalls`) and, with `[serve] toolings`, the proxied toolings
(`proxy.ToolingProxy`) and the relay of their changes (`relay.Relay`). A tool name is an agent's
name or `TOOLING.TOOL`; the two never collide (neither an agent's nor an offered tooling's name has a
'.'). Every call takes a turn (`turns.Turns`: at most `max_concurrent` at once, `queue` waiting, the
rest refused with `limit-exceeded`) and ends in an `Answer`; no exception but cancellation escapes.
It also holds what the clients share and each may take only a part of (`clients.ClientSlots`).
A catalog offering nothing is a warning naming the config file, not an error.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from host.app import Host
from host.config import Config, ServeSettings
from host.errors import ErrorCode
from host.model import Progress
from host.serve.agents import AgentCalls, AsyncLogSink, offered, prepare
from host.serve.answers import Answer, ServedTool
from host.serve.clients import ClientSlots
from host.serve.limit_log import LimitLog
from host.serve.proxy import CLIENT, ToolingProxy
from host.serve.relay import Relay
from host.serve.turns import Turns
from host.stopping import StopToken

logger = logging.getLogger(__name__)


class Catalog:
    """See the module docstring."""

    def __init__(
        self, agents: AgentCalls, proxy: ToolingProxy | None, turns: Turns, settings: ServeSettings | None = None
    ) -> None:
        self.agents = agents
        self.proxy = proxy
        self.settings = settings if settings is not None else ServeSettings()
        self.slots = ClientSlots(self.settings.max_sessions_per_client)
        """The sessions and listen streams each client holds (shared by the HTTP app and the relay)."""
        self.limit_log = LimitLog(logger)
        self.relay = Relay(proxy, self.settings, self.slots, self.limit_log) if proxy is not None else None
        self._turns = turns

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Catalog]:
        """Serve from this catalog for the block (the relay of the toolings' changes runs in it)."""
        if self.relay is None:
            yield self
            return
        async with self.relay.running():
            yield self

    async def tools(self) -> list[ServedTool]:
        """Every offered tool: the agents, then the proxied tools the grants let the client see."""
        proxied = await self.proxy.tools() if self.proxy is not None else []
        return self.agents.tools() + proxied

    def knows(self, name: str) -> bool:
        """Whether `name` is an offered agent or a `TOOLING.TOOL` of an offered tooling (the tool
        itself is looked up when called)."""
        return name in self.agents.offers or (self.proxy is not None and self.proxy.route(name) is not None)

    def names(self) -> str:
        """The offered agents and toolings, for messages."""
        toolings = [f"{tooling}.*" for tooling in self.proxy.toolings] if self.proxy is not None else []
        return ", ".join([*self.agents.offers, *toolings]) or "(none)"

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        on_log: AsyncLogSink | None = None,
        on_progress: Callable[[Progress], Awaitable[None]] | None = None,
    ) -> Answer:
        """Call tool `name` with `arguments` in its turn: an agent's guest logs to `on_log`, a proxied
        tool reports progress to `on_progress`."""
        if not self.knows(name):
            message = f"no tool {name!r} is offered; offered: {self.names()}"
            return Answer.failure(ErrorCode.NOT_FOUND, message)
        busy = self._turns.busy()
        if busy is not None:
            return Answer.failure(ErrorCode.LIMIT_EXCEEDED, busy)
        async with self._turns.turn():
            if name in self.agents.offers:
                return await self.agents.call(name, arguments, on_log)
            assert self.proxy is not None, "knows() routed it to the proxy"
            return await self.proxy.call(name, dict(arguments), on_progress)


def build_catalog(host: Host, config: Config, agents: Sequence[str] = (), stop: StopToken | None = None) -> Catalog:
    """The catalog `config` describes: its agents (`agents`, else `[serve] agents`, else all; each
    built and compiled now) and `[serve] toolings` under `[serve] grants`. Raises `HostError`."""
    calls = AgentCalls(host, prepare(host, offered(config, agents), stop))
    serve = config.serve
    if not calls.offers and not serve.toolings:
        logger.warning(
            "nothing to offer: %s defines no agent with a component and [serve] offers no toolings, so "
            "tools/list is empty (add an [agents.NAME] table with a `component`, or [serve] toolings)",
            config.describe_source(),
        )
    proxy = ToolingProxy(host, serve.toolings, host.policy(CLIENT, serve.client_grants())) if serve.toolings else None
    return Catalog(calls, proxy, Turns(serve.max_concurrent, serve.queue), serve)
