"""The agents `agent-host serve` offers, and their calls.

`prepare` resolves each offered agent's component (building and compiling it once, before anything is
served) and its policy, as `agent-host run --agent NAME` would. `AgentCalls.call` runs one call: a
fresh guest of the agent's component with the call's input, stopped at once when the caller
cancels (how many run at once is the caller's business: `turns`). Its outcome is an `Answer`: the
guest's answer, or a failure naming what went wrong; a host error never escapes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread

from host.app import Host
from host.builder import resolve_component
from host.config import AgentConfig, Config
from host.errors import ErrorCode, HostError, ToolingError, UsageError
from host.policy import AgentPolicy
from host.serve.answers import Answer, ServedTool
from host.serve.feed import Feed
from host.stopping import StopToken

logger = logging.getLogger(__name__)

INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The agent's input: the string its `run` receives."}},
    "additionalProperties": False,
}
"""The arguments of an agent's tool: `{"input": "..."}` (absent: the agent's configured `input`)."""


@dataclass(frozen=True)
class Offer:
    """One agent offered as a tool."""

    name: str
    description: str
    wasm: Path
    settings: AgentConfig
    policy: AgentPolicy

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """The JSON Schema of the tool's arguments: the agent's `input_schema`, else `INPUT_SCHEMA`."""
        return self.settings.input_schema if self.settings.input_schema is not None else INPUT_SCHEMA


def offered(config: Config, names: Sequence[str] = ()) -> list[AgentConfig]:
    """The agents to offer: `names` (the command line), else `[serve] agents`, else every agent with a
    `component`, in name order. Raises `UsageError` for a name that is not such an agent."""
    chosen = list(names) or list(config.serve.agents or ())
    if not chosen:
        return [agent for name, agent in sorted(config.agents.items()) if agent.component is not None]
    agents = []
    for name in dict.fromkeys(chosen):
        agent = config.agents.get(name)
        if agent is None or agent.component is None:
            defined = ", ".join(sorted(n for n, a in config.agents.items() if a.component is not None)) or "(none)"
            raise UsageError(
                f"agent {name!r} cannot be served: "
                + ("it is not defined" if agent is None else "its [agents] table has no `component`"),
                hint=f"agents that can be served (an [agents.NAME] table with a `component`): {defined}",
            )
        agents.append(agent)
    return agents


def prepare(host: Host, agents: Sequence[AgentConfig], stop: StopToken | None = None) -> list[Offer]:
    """Each agent's component built and compiled (once; cached), and its policy. Raises `HostError`
    (`BuildError`, `ComponentError`, `Interrupted`) naming the agent that cannot be served."""
    offers = []
    for agent in agents:
        assert agent.component is not None, "offered() keeps agents with a component"
        wasm = resolve_component(agent.component, stop=stop)
        host.runtime.load(wasm, stop)
        description = agent.description or f"Run agent {agent.name}: the input is the string its `run` receives."
        offers.append(Offer(agent.name, description, wasm, agent, host.policy(agent.name, agent)))
    return offers


AsyncLogSink = Callable[[str, str], Awaitable[None]]
"""Receives a guest's log lines (WIT level, message) on the server's loop."""


def _unpacked(on_log: AsyncLogSink) -> Callable[[tuple[str, str]], Awaitable[None]]:
    async def deliver(line: tuple[str, str]) -> None:
        await on_log(*line)

    return deliver


TRIPPED_CODES: Final[Mapping[str, ErrorCode]] = {"wall_time": ErrorCode.TIMEOUT}
"""The error code of a guest the host stopped, by what stopped it (`tool-failed` for the others)."""

LOG_BUFFER: Final = 1024
"""Log lines of one call waiting to be forwarded; more are dropped (the host's own log keeps them)."""


class AgentCalls:
    """Runs the calls of the offered agents (see the module docstring), on one event loop."""

    def __init__(self, host: Host, offers: Sequence[Offer]) -> None:
        self._host = host
        self.offers = {offer.name: offer for offer in offers}
        self._validator = host.validator

    def tools(self) -> list[ServedTool]:
        """The offered agents as tools."""
        return [ServedTool(o.name, o.description, o.input_schema) for o in self.offers.values()]

    async def call(self, name: str, arguments: Mapping[str, Any], on_log: AsyncLogSink | None = None) -> Answer:
        """Run agent `name` (one of `offers`) with `arguments` in a fresh guest and answer; each log
        line of the guest is passed to `on_log` while it runs (on this loop, in order)."""
        offer = self.offers[name]
        given = self._input(offer, arguments)
        if isinstance(given, Answer):
            return given
        return await self._run(offer, given, on_log)

    def _input(self, offer: Offer, arguments: Mapping[str, Any]) -> str | Answer:
        """The guest's input for `arguments`: with an `input_schema`, the arguments (checked against
        it) as JSON text; else `arguments["input"]` (absent: the agent's configured `input`). A
        refusal is an `invalid-arguments` answer naming what is wrong."""
        schema = offer.settings.input_schema
        if schema is not None:
            try:
                self._validator.check(
                    "serve", offer.name, dict(schema), dict(arguments), subject=f"agent {offer.name!r}"
                )
            except ToolingError as exc:
                return Answer.failure(ErrorCode.INVALID_ARGUMENTS, exc.message)
            return json.dumps(arguments, ensure_ascii=False)
        unexpected = sorted(set(arguments) - {"input"})
        given = arguments.get("input", offer.settings.input or "")
        if unexpected or not isinstance(given, str):
            return Answer.failure(
                ErrorCode.INVALID_ARGUMENTS,
                f'agent {offer.name!r} takes {{"input": string}}'
                + (f"; unexpected: {', '.join(unexpected)}" if unexpected else "; `input` must be a string"),
            )
        return given

    async def _run(self, offer: Offer, given: str, on_log: AsyncLogSink | None) -> Answer:
        """One guest of `offer` with input `given`, to its end (or stopped when the caller cancels)."""
        name = offer.name
        with Feed[tuple[str, str]](LOG_BUFFER) as lines:  # closed however the call ends

            def sink(level: str, message: str) -> None:  # on the guest's thread
                lines.push((level, message))

            try:
                guest = self._host.start(
                    offer.wasm, given, agent=name, policy=offer.policy, on_log=sink if on_log else None
                )
            except HostError as exc:
                return Answer.failure(ErrorCode.UNAVAILABLE, f"agent {name!r} cannot start: {exc}")
            try:
                async with anyio.create_task_group() as tg:
                    if on_log is not None:
                        tg.start_soon(lines.forward, _unpacked(on_log))
                    outcome = await anyio.to_thread.run_sync(guest.join, abandon_on_cancel=True)
                    lines.close()  # the guest ended: the forwarder delivers what is left, then ends
            except anyio.get_cancelled_exc_class():
                guest.stop("the client cancelled the call")
                raise
        assert outcome is not None, "join() without a timeout waits for the outcome"
        if outcome.status == "ok":
            return Answer.of_text(outcome.text)
        what = "failed" if outcome.status == "error" else "was stopped"
        code = TRIPPED_CODES.get(outcome.tripped or "", ErrorCode.TOOL_FAILED)
        return Answer.failure(code, f"agent {name} {what}: {outcome.text}")
