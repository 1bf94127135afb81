"""Running agents by name: which agents, their components and inputs, and how each run ended.

The application side of `agent-host run`. `select_agents` names the `[agents.*]` tables to run
(raising `UsageError` for an unknown name or an empty selection). `prepare` resolves every
component first (building guest folders, cached); an agent whose component cannot be resolved
carries its `HostError` and never starts. `run_all` starts the others on one host, concurrently,
and waits for every one: a start failure (a component that does not compile) is a result too.
Results keep the order of the agents. A stop request (`StopToken`) ends a build or start in
progress: those agents (and every later one) end as `interrupted`. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_host._support.stopping import StopToken
from agent_host.app import devmode
from agent_host.components.build import resolve_component
from agent_host.components.code_runners import agent_component
from agent_host.errors import HostError, UsageError
from agent_host.model import RunResult

if TYPE_CHECKING:
    from agent_host.app.host import Host
    from agent_host.config import AgentConfig, Config
    from agent_host.runtime.guest import GuestThread


@dataclass(frozen=True)
class AgentRun:
    """One agent to run: its name, settings, input and component, or why it cannot start."""

    name: str
    settings: AgentConfig | None
    """Its `[agents.NAME]` table; None for a guest run by its path (the `[host]` defaults apply)."""
    input: str
    component: Path | None = None
    failure: HostError | None = None
    source: Path | None = None
    """Dev mode: the guest folder the dev runner (`component`) reads at run time."""


@dataclass(frozen=True)
class Finished:
    """How one agent's run ended; `failure` is the error that kept it from starting."""

    outcome: RunResult
    failure: HostError | None = None


def agent_settings(config: Config, name: str) -> AgentConfig:
    """The `[agents.NAME]` table; `UsageError` naming the defined agents when there is none."""
    agent = config.agents.get(name)
    if agent is None:
        raise UsageError(
            f"--agent {name}: no [agents.{name}] table in {config.describe_source()}",
            hint=f"defined agents: {', '.join(sorted(config.agents)) or '(none)'}",
        )
    return agent


def select_agents(config: Config, names: Sequence[str]) -> list[AgentConfig]:
    """The named agents (each once, in order), or every `[agents.*]` in name order when `names` is
    empty. Raises `UsageError` when the configuration defines no agent or lacks a named one."""
    if not config.agents:
        raise UsageError(
            f"nothing to run: give a GUEST (folder or .wasm) or --agent NAME; {config.describe_source()} "
            "defines no [agents.*] tables"
        )
    if names:
        return [agent_settings(config, name) for name in dict.fromkeys(names)]
    return [config.agents[name] for name in sorted(config.agents)]


def prepare(
    agents: Iterable[AgentConfig], given_input: str | None, stop: StopToken, *, dev: bool = False
) -> list[AgentRun]:
    """Resolve each agent's component (building guest folders; with `dev`, the dev runner reading
    each guest folder at run time); `given_input` replaces every agent's own input. Failures
    (`Interrupted` on a stop request too) are recorded."""
    runs = []
    for agent in agents:
        input_text = given_input if given_input is not None else agent.input or ""
        try:
            if not agent.runs:
                raise UsageError(f"has no `component` and no `code` ({agent.origin})")
            if agent.component is None:  # a code agent: the runner runs its input
                if dev:
                    raise UsageError(f"is a code agent: it has no guest folder for --dev to run ({agent.origin})")
                runs.append(AgentRun(agent.name, agent, input_text, agent_component(agent, stop)))
            elif dev:
                component = devmode.dev_component(agent.component, stop=stop)
                runs.append(AgentRun(agent.name, agent, input_text, component, source=agent.component))
            else:
                runs.append(AgentRun(agent.name, agent, input_text, resolve_component(agent.component, stop=stop)))
        except HostError as exc:
            runs.append(AgentRun(agent.name, agent, input_text, failure=exc))
    return runs


def run_all(host: Host, runs: Sequence[AgentRun], allow: Iterable[str] = ()) -> list[Finished]:
    """Start every prepared agent on `host` (with `allow` granted as by `--allow`), then wait for
    all of them. Results are in the order of `runs`."""
    allow = tuple(allow)
    started: dict[str, GuestThread] = {}
    failed: dict[str, HostError] = {run.name: run.failure for run in runs if run.failure is not None}
    for run in runs:
        if run.component is None:
            continue
        try:
            policy = host.policy(run.name, run.settings, allow)
            if run.source is not None:
                policy = devmode.dev_policy(policy, run.source)
            started[run.name] = host.start(run.component, run.input, agent=run.name, policy=policy)
        except HostError as exc:
            failed[run.name] = exc
    outcomes = {name: host.wait(guest) for name, guest in started.items()}
    return [
        Finished(outcomes[run.name]) if run.name in outcomes else _failed(run.name, failed[run.name]) for run in runs
    ]


def _failed(agent: str, exc: HostError) -> Finished:
    return Finished(RunResult.not_started(agent, exc), exc)
