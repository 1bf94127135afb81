"""`Catalog`: everything `agent-host serve` offers, behind one interface for MCP and the HTTP API.

It holds the offered agents (`agents.AgentCalls`), with `[serve] toolings` the proxied toolings
(`proxy.ToolingProxy`) and their relay (`relay.Relay`), and what clients share (`clients.ClientSlots`).
A tool name is an agent's name or `TOOLING.TOOL` (never colliding). Every call is checked as strict
JSON (`strict_json.check`, off the loop when large: `off_loop`; else `invalid-arguments`), takes a
turn of its client (`turns.Turns`: `max_concurrent` at once, `queue` waiting, divided between
clients, the rest `limit-exceeded`), ends in an `Answer` (no exception but cancellation escapes) and
is one audit line (`serve-call`) whatever happens to it, charged to its client's allowance
(`audit_budget.Allowances`). Once the server stops (`stopping`), calls in flight have `grace`
seconds, then each answers `cancelled`; it says how many it waits for. Offering nothing is a
warning naming the config file.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio

from agent_host._support import off_loop, strict_json, tracing
from agent_host._support.stopping import StopToken
from agent_host.app.host import Host
from agent_host.config import Config, ServeSettings
from agent_host.errors import ErrorCode
from agent_host.model import Progress
from agent_host.serve.agents import AgentCalls, AgentRunner, AsyncLogSink, LocalAgents, Offer, offered, prepare
from agent_host.serve.answers import Answer, ServedTool
from agent_host.serve.clients import LOCAL, ClientSlots
from agent_host.serve.limit_log import LimitLog
from agent_host.serve.metrics import UNKNOWN, ServeMetrics
from agent_host.serve.proxy import CLIENT, ToolingProxy
from agent_host.serve.relay import Relay
from agent_host.serve.turns import Evicted, Turns
from agent_host.session.audit_budget import Allowances, AuditBudget
from agent_host.session.audit_log import AuditLog

logger = logging.getLogger(__name__)

OPERATION: Final = "serve-call"
"""The audit log's `operation` of a call a client made of `agent-host serve`."""


class Catalog:
    """See the module docstring."""

    def __init__(
        self,
        agents: AgentCalls,
        proxy: ToolingProxy | None,
        turns: Turns,
        settings: ServeSettings | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.agents = agents
        self.proxy = proxy
        self.settings = settings if settings is not None else ServeSettings()
        self.slots = ClientSlots(self.settings.max_sessions_per_client)
        """The sessions and listen streams each client holds (shared by the HTTP app and the relay)."""
        self.limit_log = LimitLog(logger)
        self.relay: Relay | None = None
        self._turns = turns
        self._audit = audit
        keys = f"audit_client_max, audit_client_rate in {self.settings.origin}"
        self.allowances = Allowances(
            self.settings.audit_client_max, self.settings.audit_client_rate, agent=CLIENT, keys=keys
        )
        """The audit allowance of each client."""
        if proxy is not None:
            self.relay = Relay(proxy, self.settings, self.slots, self.limit_log, self.allowances)
        self._in_flight: set[anyio.CancelScope] = set()
        self._cutoff = math.inf
        """When calls in flight are cancelled (the loop's clock): set by `stopping`."""
        self.metrics = ServeMetrics(self.knows, self._gauges, self.agents.runner.ready)
        """What `GET /metrics` shows."""

    def _gauges(self) -> dict[str, float]:
        return {
            "agent_host_calls_running": self._turns.running,
            "agent_host_calls_waiting": self._turns.waiting,
            "agent_host_max_concurrent": self._turns.max_concurrent,
            "agent_host_queue": self._turns.queue,
        }

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Catalog]:
        """Serve from this catalog for the block (the relay of the toolings' changes runs in it); at
        its end, what the clients' audit allowances counted is told."""
        try:
            if self.relay is None:
                yield self
            else:
                async with self.relay.running():
                    yield self
        finally:
            if self._audit is not None:
                self._audit.tell(self.allowances.pending())

    async def tools(self, client: str = LOCAL) -> list[ServedTool]:
        """Every offered tool: the agents, then the proxied tools the grants let the client see
        (listing them upstream is audited, charged to `client`'s allowance)."""
        if self.proxy is None:
            return self.agents.tools()
        with self.allowances.held(client) as allowance:
            return self.agents.tools() + await self.proxy.tools(allowance)

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The input schema of offered tool `name` as known without asking anyone (None: not known
        yet, or not offered): what the SDK checks a call's `Mcp-Param-*` headers against before the
        call, instead of listing every tool for each call."""
        offer = self.agents.offers.get(name)
        if offer is not None:
            return offer.input_schema
        return self.proxy.input_schema(name) if self.proxy is not None else None

    def knows(self, name: str) -> bool:
        """Whether `name` is an offered agent or a `TOOLING.TOOL` of an offered tooling (the tool
        itself is looked up when called)."""
        return name in self.agents.offers or (self.proxy is not None and self.proxy.route(name) is not None)

    def offered(self) -> tuple[list[str], list[str]]:
        """The names of the offered agents and of the proxied toolings, in the order they are offered."""
        return list(self.agents.offers), list(self.proxy.toolings) if self.proxy is not None else []

    def names(self) -> str:
        """The offered agents and toolings, for messages."""
        toolings = [f"{tooling}.*" for tooling in self.proxy.toolings] if self.proxy is not None else []
        return ", ".join([*self.agents.offers, *toolings]) or "(none)"

    def stopping(self, grace: float) -> None:
        """The server stops (on its loop): calls in flight may take `grace` seconds more, then each is
        cancelled and answers `cancelled`. The first time, with calls in flight, it says how many it
        waits for, and how long at most."""
        if self._cutoff == math.inf and self._in_flight:
            logger.info("%s", waiting_line(len(self._in_flight), grace))
        self._cutoff = min(self._cutoff, anyio.current_time() + grace)
        for scope in self._in_flight:
            scope.deadline = min(scope.deadline, self._cutoff)

    def record(self, name: str, argument_bytes: int, outcome: str, started: float, client: str = LOCAL) -> None:
        """One audit line for a call of tool `name` by `client` that began at `started`
        (`time.monotonic`), charged to the client's allowance, and counted in the metrics (a call
        the HTTP tool API refused before it reached `call`)."""
        self.metrics.observe(name, outcome, time.monotonic() - started)
        with self.allowances.held(client) as allowance:
            self._record(name, argument_bytes, outcome, started, allowance)

    def _record(self, name: str, argument_bytes: int, outcome: str, started: float, allowance: AuditBudget) -> None:
        if self._audit is not None:
            self._audit.record(
                agent=CLIENT,
                tooling=None,
                operation=OPERATION,
                target=name,
                argument_bytes=argument_bytes,
                outcome=outcome,
                duration=time.monotonic() - started,
                budget=allowance,
            )

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        on_log: AsyncLogSink | None = None,
        on_progress: Callable[[Progress], Awaitable[None]] | None = None,
        *,
        argument_bytes: int | None = None,
        client: str = LOCAL,
    ) -> Answer:
        """Call tool `name` with `arguments` in a turn of `client` (`clients.client_of_scope`): an
        agent's guest logs to `on_log`, a proxied tool reports progress to `on_progress`. Audited
        (`argument_bytes`: the size of the arguments as received; absent: of their JSON text), the
        call's lines charged to the client's allowance."""
        started = time.monotonic()
        outcome = ErrorCode.CANCELLED.value  # unless an answer comes: the caller cancelled the call
        shown = name if self.knows(name) else UNKNOWN  # a span name from the config, never a client's text
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": shown}
        with self.allowances.held(client) as allowance, tracing.span(f"serve {shown}", attributes) as span:
            try:
                answer = await self._call(name, arguments, on_log, on_progress, client, allowance)
                outcome = answer.code or "ok"
                return answer
            finally:
                if outcome != "ok":
                    tracing.failed(span, outcome)
                self.metrics.observe(name, outcome, time.monotonic() - started)
                if self._audit is not None:
                    size = argument_bytes if argument_bytes is not None else _size(arguments)
                    self._record(name, size, outcome, started, allowance)

    async def _call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        on_log: AsyncLogSink | None,
        on_progress: Callable[[Progress], Awaitable[None]] | None,
        client: str,
        allowance: AuditBudget,
    ) -> Answer:
        if not self.knows(name):
            message = f"no tool {name!r} is offered; offered: {self.names()}"
            return Answer.failure(ErrorCode.NOT_FOUND, message)
        try:
            await off_loop.run(strict_json.check, dict(arguments), size=off_loop.size_of(arguments))
        except strict_json.JsonTextError as exc:
            message = f"the arguments are not strict JSON: {exc}"
            return Answer.failure(ErrorCode.INVALID_ARGUMENTS, message)
        ticket = self._turns.admit(client)
        if isinstance(ticket, str):
            self.limit_log.reached("queue", f"refused a call: {ticket}")
            return Answer.failure(ErrorCode.LIMIT_EXCEEDED, ticket)
        with anyio.CancelScope(deadline=self._cutoff) as scope:
            self._in_flight.add(scope)
            try:
                async with self._turns.turn(ticket):
                    if name in self.agents.offers:
                        return await self.agents.call(name, arguments, on_log, audit_budget=allowance)
                    assert self.proxy is not None, "knows() routed it to the proxy"
                    return await self.proxy.call(name, dict(arguments), on_progress, audit_budget=allowance)
            except Evicted as exc:
                self.limit_log.reached("queue", f"refused a waiting call: {exc}")
                return Answer.failure(ErrorCode.LIMIT_EXCEEDED, str(exc))
            finally:
                self._in_flight.discard(scope)
        return Answer.failure(
            ErrorCode.CANCELLED, "the server is stopping and the call did not end within [serve] grace"
        )


def waiting_line(calls: int, grace: float) -> str:
    """What the server says when it starts to stop with `calls` in flight: it waits for them, up to
    `grace` seconds (`[serve] grace`), then cancels those left."""
    noun = "call" if calls == 1 else "calls"
    return f"stopping: waiting for {calls} {noun} in flight to end, up to {grace:g} s ([serve] grace)"


def _size(arguments: Mapping[str, Any]) -> int:
    """Bytes of the JSON text of `arguments` (escaped: any value strict JSON refuses has a size too)."""
    try:
        return len(json.dumps(arguments, ensure_ascii=True, allow_nan=True))
    except (TypeError, ValueError, RecursionError):
        return 0


def build_catalog(
    host: Host,
    config: Config,
    agents: Sequence[str] = (),
    stop: StopToken | None = None,
    runner: Callable[[Sequence[Offer]], AgentRunner] | None = None,
) -> Catalog:
    """The catalog `config` describes: its agents (`agents`, else `[serve] agents`, else all; each
    built and compiled now) and `[serve] toolings` under `[serve] grants`. `runner(offers)` makes
    where the agents run (default: `LocalAgents` of `host`, with `[serve] ready_instances`). Raises
    `HostError`."""
    serve = config.serve
    offers = prepare(host, offered(config, agents), stop)
    made = runner(offers) if runner is not None else LocalAgents(host, offers, int(serve.ready_instances))
    calls = AgentCalls(host, offers, int(serve.log_buffer), made)
    if not calls.offers and not serve.toolings:
        logger.warning(
            "nothing to offer: %s defines no agent with a component and [serve] offers no toolings, so "
            "tools/list is empty (add an [agents.NAME] table with a `component`, or [serve] toolings)",
            config.describe_source(),
        )
    proxy = ToolingProxy(host, serve.toolings, host.policy(CLIENT, serve.client_grants())) if serve.toolings else None
    return Catalog(calls, proxy, Turns(serve.max_concurrent, serve.queue), serve, host.audit)
