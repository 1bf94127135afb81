"""The agents `agent-host serve` offers, and their calls.

`prepare` resolves each offered agent's component (building and compiling it once, before anything is
served) and its policy, as `agent-host run --agent NAME` would. `AgentCalls.call` runs one call: a
fresh guest of the agent's component with the call's input, stopped at once when the caller
cancels (how many run at once is the caller's business: `turns`); a cancelled call returns once its
guest has ended (at most `STOP_WAIT` seconds), so its turn is not free while the guest still runs.
Its outcome is an `Answer`: the guest's answer (over `max_result_bytes`: `limit-exceeded` instead),
or a failure naming what went wrong; a host error never escapes. The guest's log lines reach the
caller cut (`guest_log.cut`) and bounded per call (`[serve] log_buffer`, `feed.Feed`); once the
guest ends, what waits has `LOG_DRAIN_WAIT` seconds (the rest dropped, told by one line, see
`_forward`). What a call's end logs goes through `LimitLog`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import anyio
import anyio.to_thread

from agent_host._support import off_loop
from agent_host._support.stopping import StopToken
from agent_host.app.host import Host
from agent_host.components.code_runners import agent_component
from agent_host.config import AgentConfig, Config
from agent_host.errors import ErrorCode, HostError, ToolingError, UsageError
from agent_host.model import RunResult, RunStatus
from agent_host.policy.grants import AgentPolicy
from agent_host.serve import code_api
from agent_host.serve.answers import Answer, ServedTool
from agent_host.serve.feed import Feed
from agent_host.serve.limit_log import LimitLog
from agent_host.session.audit_budget import AuditBudget
from agent_host.session.guest_log import cut

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
    derived_schema: Mapping[str, Any] | None = None
    """The schema the component says its input has (`Host.input_schema`: a typed `@agent`)."""

    @property
    def arguments_schema(self) -> Mapping[str, Any] | None:
        """The schema the tool's arguments are checked against and passed as the input's JSON: the
        agent's `input_schema`, else the one its component says; None: `{"input": string}`."""
        return self.settings.input_schema if self.settings.input_schema is not None else self.derived_schema

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """The JSON Schema of the tool's arguments: `arguments_schema`, else `INPUT_SCHEMA` (a code
        agent's: `{"code": string}`)."""
        if self.settings.code is not None:
            return code_api.code_schema(self.settings.code)
        schema = self.arguments_schema
        return schema if schema is not None else INPUT_SCHEMA

    @property
    def output_schema(self) -> Mapping[str, Any] | None:
        """The schema of its structured answer: a code agent's `{"result", "stdout"}`, else none said."""
        return code_api.answer_schema(self.settings.code) if self.settings.code is not None else None


def offered(config: Config, names: Sequence[str] = ()) -> list[AgentConfig]:
    """The agents to offer: `names` (the command line), else `[serve] agents`, else every agent with a
    `component` or `code`, in name order. Raises `UsageError` for a name that is not such an agent."""
    chosen = list(names) or list(config.serve.agents or ())
    if not chosen:
        return [agent for name, agent in sorted(config.agents.items()) if agent.runs]
    agents = []
    for name in dict.fromkeys(chosen):
        agent = config.agents.get(name)
        if agent is None or not agent.runs:
            defined = ", ".join(sorted(n for n, a in config.agents.items() if a.runs)) or "(none)"
            raise UsageError(
                f"agent {name!r} cannot be served: "
                + ("it is not defined" if agent is None else "its [agents] table has no `component` and no `code`"),
                hint=f"agents that can be served (an [agents.NAME] table with a `component` or `code`): {defined}",
            )
        agents.append(agent)
    return agents


def prepare(host: Host, agents: Sequence[AgentConfig], stop: StopToken | None = None) -> list[Offer]:
    """Each agent's component built and compiled (once; cached), its policy, and the schema of its
    input when the component says one (a typed `@agent`, unless the table gives `input_schema`). Raises `HostError`
    (`BuildError`, `ComponentError`, `Interrupted`) naming the agent that cannot be served."""
    offers = []
    for agent in agents:
        wasm = agent_component(agent, stop)
        policy = host.policy(agent.name, agent)
        if agent.code is not None:  # its input is the code; its description the API the code sees
            offers.append(Offer(agent.name, code_api.describe(host, agent, policy), wasm, agent, policy))
            continue
        derived = host.input_schema(wasm, agent.name, policy) if agent.input_schema is None else None
        default = "the input is the string its `run` receives" if derived is None else "its arguments are its input"
        description = agent.description or f"Run agent {agent.name}: {default}."
        offers.append(Offer(agent.name, description, wasm, agent, policy, derived))
    return offers


AsyncLogSink = Callable[[str, str], Awaitable[None]]
"""Receives a guest's log lines (WIT level, message) on the server's loop."""


def _unpacked(on_log: AsyncLogSink) -> Callable[[tuple[str, str]], Awaitable[None]]:
    async def deliver(line: tuple[str, str]) -> None:
        await on_log(*line)

    return deliver


TRIPPED_CODES: Final[Mapping[str, ErrorCode]] = {
    "wall_time": ErrorCode.TIMEOUT,
    "open_files": ErrorCode.LIMIT_EXCEEDED,
    "memory": ErrorCode.LIMIT_EXCEEDED,
}
"""The error code of a guest the host stopped, by what stopped it (host state, `RunResult.tripped`;
`tool-failed` for the others)."""

LINE_OVERHEAD: Final = 100
"""Bytes one waiting log line counts for beyond its text (so that empty lines are not free)."""

POOL_FILL_WAIT: Final = 60.0
"""Seconds serving waits at start for the instances of each offered agent made ahead (`ready_instances`)."""

LOG_DRAIN_WAIT: Final = 5.0
"""Seconds the log lines still waiting when a guest ends may take to reach the client; the rest are
dropped and the answer is sent (a client that never reads does not hold the call)."""

NOTICE_WAIT: Final = 1.0
"""Seconds the line saying how many log lines the drain dropped may take to reach the client."""

STOP_WAIT: Final = 10.0
"""Seconds a cancelled call waits for its stopped guest to end before it gives its turn back anyway."""

LogLine = tuple[str, str]
"""(WIT level, message) of one guest log line."""


def _line_cost(line: LogLine) -> int:
    return len(line[1].encode("utf-8", "surrogatepass")) + LINE_OVERHEAD


def _dropped_marker(count: int) -> LogLine:
    return "warn", f"[{count} log lines dropped: the client reads them slower than the agent writes them]"


def _drained_marker(count: int) -> LogLine:
    return (
        "warn",
        f"[{count} log lines dropped: the client did not read them within {LOG_DRAIN_WAIT:g} s of the agent's end]",
    )


class AgentRunner(Protocol):
    """Where an offered agent's guests run: this process (`LocalAgents`) or a Ray cluster
    (`cluster.serving.RayAgents`)."""

    async def run(
        self, offer: Offer, given: str, on_log: LogSink | None, audit_budget: AuditBudget | None = None
    ) -> RunResult:
        """Run a fresh guest of `offer` with input `given` to its end, its log lines to `on_log` (from
        any thread), its audit lines charged to `audit_budget` too (the client's allowance). When the
        caller is cancelled, the guest is stopped and waited for (at most `STOP_WAIT` seconds) before
        the cancellation goes on. Raises `HostError` when it cannot start."""
        ...

    def close(self) -> None:
        """Free what it holds (instances made ahead, workers); from the thread that made it."""
        ...

    def ready(self) -> Mapping[str, int]:
        """Instances made ahead and ready now, by agent (for `GET /metrics`; none where none are made)."""
        ...


LogSink = Callable[[str, str], None]
"""Receives a guest's log lines (WIT level, message) from any thread."""


class LocalAgents:
    """Guests in this process (`Host.start`), each call's own fresh instance; `ready_instances` of each
    offered agent are made ahead (`runtime.pool`), waited for before serving."""

    def __init__(self, host: Host, offers: Sequence[Offer], ready_instances: int = 0) -> None:
        self._host = host
        self._limit_log = LimitLog(logger)
        self._pools = {
            offer.name: host.pool(offer.wasm, offer.name, offer.policy, ready_instances)
            for offer in offers
            if ready_instances > 0
        }
        for pool in self._pools.values():  # before serving: the first calls find them, and memory is steady
            pool.filled(POOL_FILL_WAIT)

    async def run(
        self, offer: Offer, given: str, on_log: LogSink | None, audit_budget: AuditBudget | None = None
    ) -> RunResult:
        name = offer.name
        pool = self._pools.get(name)
        guest = self._host.start(
            offer.wasm, given, agent=name, policy=offer.policy, on_log=on_log, pool=pool, audit_budget=audit_budget
        )
        try:
            outcome = await anyio.to_thread.run_sync(guest.join, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            guest.stop("the client cancelled the call")
            with anyio.CancelScope(shield=True):
                ended = await anyio.to_thread.run_sync(guest.join, STOP_WAIT, abandon_on_cancel=True)
            stopped(self._limit_log, name, ended is not None)
            raise
        assert outcome is not None, "join() without a timeout waits for the outcome"
        return outcome

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()

    def ready(self) -> Mapping[str, int]:
        return {name: pool.waiting for name, pool in self._pools.items()}


def stopped(limit_log: LimitLog, name: str, ended: bool) -> None:
    """Log (once in a while) that a cancelled call's guest stopped, or did not within `STOP_WAIT`."""
    if not ended:
        limit_log.reached(
            f"slow stop {name}", f"agent {name}: a cancelled call's guest did not stop within {STOP_WAIT} s"
        )
    else:
        limit_log.reached(f"cancelled {name}", f"agent {name}: call cancelled, its guest stopped", logging.INFO)


class AgentCalls:
    """Runs the calls of the offered agents (see the module docstring), on one event loop."""

    def __init__(
        self, host: Host, offers: Sequence[Offer], log_buffer: int = 1024 * 1024, runner: AgentRunner | None = None
    ) -> None:
        """`log_buffer`: bytes of one call's log lines that may wait for the client; `runner`: where
        the guests run (default: `LocalAgents` of `host`, without instances made ahead)."""
        self.offers = {offer.name: offer for offer in offers}
        self._validator = host.validator
        self._log_buffer = log_buffer
        self._limit_log = LimitLog(logger)
        self.runner: AgentRunner = runner if runner is not None else LocalAgents(host, offers)

    def tools(self) -> list[ServedTool]:
        """The offered agents as tools."""
        return [ServedTool(o.name, o.description, o.input_schema, o.output_schema) for o in self.offers.values()]

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        on_log: AsyncLogSink | None = None,
        *,
        audit_budget: AuditBudget | None = None,
    ) -> Answer:
        """Run agent `name` (one of `offers`) with `arguments` in a fresh guest and answer; each log
        line of the guest is passed to `on_log` while it runs (on this loop, in order); its audit
        lines are charged to `audit_budget` too (the client's allowance)."""
        offer = self.offers[name]
        given = await off_loop.run(self._input, offer, arguments, size=off_loop.size_of(arguments))
        if isinstance(given, Answer):
            return given
        return await self._run(offer, given, on_log, audit_budget)

    def _input(self, offer: Offer, arguments: Mapping[str, Any]) -> str | Answer:
        """The guest's input for `arguments`: with an `input_schema`, the arguments (checked against
        it) as JSON text; else `arguments["input"]` (absent: the agent's configured `input`). A
        refusal is an `invalid-arguments` answer naming what is wrong. Linear in the size of
        `arguments` (`off_loop`). A code agent takes `{"code": string}`: the code is its input."""
        if offer.settings.code is not None:
            code = arguments.get("code")
            if set(arguments) != {"code"} or not isinstance(code, str):
                return Answer.failure(
                    ErrorCode.INVALID_ARGUMENTS, f'agent {offer.name!r} takes {{"code": string}}: the code to run'
                )
            return code
        schema = offer.arguments_schema
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

    async def _run(
        self, offer: Offer, given: str, on_log: AsyncLogSink | None, audit_budget: AuditBudget | None
    ) -> Answer:
        """One guest of `offer` with input `given`, to its end (or stopped when the caller cancels)."""
        name = offer.name
        with Feed[LogLine](self._log_buffer, _line_cost, _dropped_marker) as lines:  # closed however it ends

            def sink(level: str, message: str) -> None:  # on the guest's thread (or the loop)
                lines.push((level, cut(message)))

            drain = anyio.CancelScope()
            refused: HostError | None = None
            async with anyio.create_task_group() as tg:
                if on_log is not None:
                    tg.start_soon(_forward, lines, _unpacked(on_log), drain, self._limit_log)
                try:
                    outcome = await self.runner.run(offer, given, sink if on_log else None, audit_budget)
                except HostError as exc:  # caught here: out of the task group it is wrapped in a group
                    refused = exc
                lines.close()  # the guest ended: the forwarder delivers what is left, then ends
                drain.deadline = anyio.current_time() + LOG_DRAIN_WAIT
            if refused is not None:
                return Answer.failure(ErrorCode.UNAVAILABLE, f"agent {name!r} cannot start: {refused}")
        return await off_loop.run(_answer, offer, outcome, size=len(outcome.text))


def _answer(offer: Offer, outcome: RunResult) -> Answer:
    """The answer of a guest's run that ended with `outcome` (linear in the length of its text)."""
    name = offer.name
    limit = offer.policy.limits.max_result_bytes
    if _oversize(outcome.text, limit.value):
        what = "answer" if outcome.status is RunStatus.OK else "error"
        return Answer.failure(
            ErrorCode.LIMIT_EXCEEDED,
            f"agent {name}'s {what} is larger than the limit of {int(limit.value)} bytes ({limit.key}); "
            "it was not sent",
        )
    if outcome.status is RunStatus.OK:
        answer = Answer.of_text(outcome.text)
        if offer.settings.code is not None and not _code_answer(answer):
            return Answer.failure(
                ErrorCode.TOOL_FAILED,
                f'agent {name}\'s answer is not code mode\'s {{"result", "stdout"}}: the code changed how its '
                "answer is written (the runner runs in the same sandbox as the code)",
            )
        return answer
    if outcome.status is RunStatus.CRASHED:
        return Answer.failure(ErrorCode.UNAVAILABLE, f"agent {name} crashed: {outcome.text}")
    what = "failed" if outcome.status is RunStatus.ERROR else "was stopped"
    code = TRIPPED_CODES.get(outcome.tripped or "", ErrorCode.TOOL_FAILED)
    return Answer.failure(code, f"agent {name} {what}: {outcome.text}")


def _code_answer(answer: Answer) -> bool:
    """Whether a code agent's answer is what its tool's output schema says: `{"result", "stdout"}`."""
    structured = answer.structured
    return structured is not None and set(structured) == {"result", "stdout"} and isinstance(structured["stdout"], str)


def _oversize(text: str, limit: float) -> bool:
    """Whether `text` is more than `limit` bytes of UTF-8 (more characters than that: not encoded)."""
    return len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit


async def _forward(
    lines: Feed[LogLine],
    deliver: Callable[[LogLine], Awaitable[None]],
    drain: anyio.CancelScope,
    limit_log: LimitLog,
) -> None:
    """Deliver `lines` until the feed is closed and empty, or `drain` (whose deadline is set when the
    guest ends) runs out; then the lines never delivered are told by one "N log lines dropped" line,
    sent for at most `NOTICE_WAIT` seconds."""
    with drain:
        await lines.forward(deliver)
    if drain.cancelled_caught:
        lost = lines.abandon()
        message = f"log lines of a call were dropped: its client did not read them within {LOG_DRAIN_WAIT} s"
        limit_log.reached("log drain", message, logging.INFO)
        with anyio.move_on_after(NOTICE_WAIT):
            await deliver(_drained_marker(lost))
