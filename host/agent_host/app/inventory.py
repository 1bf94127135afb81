"""What the configured toolings offer and whether a configuration holds up, as data.

The application side of `agent-host tools` (and `--pin`), `call` and `config check`: functions that
take a `Config` or a running `Host` and return plain values for the command line to render. They act
for the person running the host (agent `cli`, every tooling granted), who sees the tools changed or
new since they were pinned, marked. A tooling that fails is reported in the result with its
`ToolingError`, never skipped; only `call_tool` raises (a call that has no result). Nothing here prints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_host.components.build import component_problem
from agent_host.components.needs import toolings_asked
from agent_host.errors import ComponentError, ErrorCode, ToolingError

if TYPE_CHECKING:
    from agent_host._support.stopping import StopToken
    from agent_host.app.host import Host
    from agent_host.config import AgentConfig, Config
    from agent_host.model import ResourceSpec, ToolSpec
    from agent_host.policy.pins import PinStatus, Repin
    from agent_host.session import GuestSession
CLI_AGENT = "cli"
"""The agent name the command line acts as (in audit logs and error messages)."""


def operator_session(host: Host, agent: str = CLI_AGENT) -> GuestSession:
    """A session acting for the person running the host: every configured tooling granted, the
    default limits (an `[agents.NAME]` table of the same name is not consulted). `Host.session`
    itself denies by default; the command line's `tools`, `call` and `config check` come here."""
    everything = ["*"] if host.config.toolings else []
    return host.session(agent, host.policy(agent, None, everything))


@dataclass(frozen=True)
class ToolingReport:
    """One tooling's tools and resources, or the error that kept them from being listed."""

    name: str
    tools: tuple[ToolSpec, ...] = ()
    resources: tuple[ResourceSpec, ...] = ()
    error: ToolingError | None = None
    pins: dict[str, PinStatus] | None = None
    """Each tool's status against the tooling's pins; None when the tooling does not pin its tools."""
    repin: Repin | None = None
    """What `list_toolings(..., pin=True)` changed in the lock file."""


@dataclass(frozen=True)
class CallReport:
    """A tool's result in MCP wire form (`content`, `structuredContent`, `isError`); `error` is set
    when the tool reported a failure (`isError`)."""

    result: dict[str, Any]
    error: ToolingError | None = None


def list_toolings(host: Host, names: Sequence[str], *, pin: bool = False) -> list[ToolingReport]:
    """Connect to each named tooling and list its tools (changed or new ones too) and resources, in
    the order of `names`; with `pin`, record the listed tools as the tooling's pins first (each named
    tooling must set `pin_tools`). A tooling that cannot list resources (no resources capability) has none."""
    session = operator_session(host)
    reports = []
    for name in names:
        repin = None
        try:
            rep = session.get(name)
            tools = session.list_tools(rep, unpinned=True)
            if pin:
                repin = host.pins.pin(name, tools)
            try:
                resources = session.list_resources(rep)
            except ToolingError as exc:
                if exc.code is not ErrorCode.UNAVAILABLE:
                    raise
                resources = []
        except ToolingError as exc:
            reports.append(ToolingReport(name, error=exc))
            continue
        pins = host.pins.review(name, tools) if host.pins.applies(name) else None
        reports.append(ToolingReport(name, tuple(tools), tuple(resources), pins=pins, repin=repin))
    return reports


def call_tool(host: Host, tooling: str, tool: str, arguments: str) -> CallReport:
    """Call `tool` of `tooling` with `arguments` (JSON text) and wait for its result.

    Raises `ToolingError` when there is no result (unknown tooling or tool, invalid arguments,
    unreachable server, timeout); a tool that reports an error gives a `CallReport` with `error`."""
    session = operator_session(host)
    rep = session.get(tooling)
    try:
        outcome = session.call_tool_blocking(rep, tool, arguments)
    except ToolingError as exc:
        if exc.code is not ErrorCode.TOOL_FAILED or exc.data is None:
            raise
        return CallReport(json.loads(exc.data), exc)
    return CallReport(json.loads(outcome.value))


def config_problems(config: Config) -> list[str]:
    """Every problem found without starting anything: agents' components that are missing or not
    guests, python tools that cannot be imported. Empty when there is none (what an agent's guest
    asks for and cannot get is a warning: `config_warnings`)."""
    problems: list[str] = []
    for name, agent in sorted(config.agents.items()):
        if agent.component is not None:
            problem = component_problem(agent.component)
            if problem is not None:
                problems.append(f"[agents.{name}] component: {problem} ({agent.origin})")
    python = [tooling for tooling in config.toolings.values() if tooling.kind == "python"]
    if python:
        from agent_host.toolings.python import import_tools  # only a config with python toolings pays for it

        for tooling in python:
            try:
                import_tools(tooling)
            except ToolingError as exc:
                problems.append(exc.message)
    return problems


def import_problems(config: Config, stop: StopToken | None = None) -> list[str]:
    """A problem for each agent whose component is a `.wasm` file that the host cannot run: not a
    component, or importing what the host does not link (`runtime.linkable`: `wasi:http`, say). Each
    such file is compiled for this machine first, as its first run would (once; cached after).
    Guest folders are left out: `agent-host build` builds them with what the host links."""
    files = [
        (name, agent.component, agent.origin)
        for name, agent in sorted(config.agents.items())
        if agent.component is not None and agent.component.is_file()
    ]
    if not files:
        return []
    from agent_host._support.paths import cache_dir
    from agent_host.runtime.engine import Runtime  # only a config with .wasm components pays for wasmtime

    problems: list[str] = []
    with Runtime(cache_dir()) as runtime:
        for name, wasm, origin in files:
            try:
                runtime.load(wasm, stop)
            except ComponentError as exc:
                problems.append(f"[agents.{name}] component: {exc} ({origin})")
    return problems


def config_warnings(config: Config) -> list[str]:
    """What may stop an agent on some inputs without being wrong: each tooling its guest names that
    this file does not define or does not grant it (`unmet_needs`). A guest may reach a tooling only
    on some inputs and handle its absence, so these are warnings (`config check --strict`: errors)."""
    warnings: list[str] = []
    for name, agent in sorted(config.agents.items()):
        if agent.component is not None and component_problem(agent.component) is None:
            warnings += unmet_needs(config, name, agent)
    return warnings


def unmet_needs(config: Config, name: str, agent: AgentConfig) -> list[str]:
    """A warning for each tooling the guest of agent `name` names (`needs.toolings_asked`) that this
    file does not define or does not grant the agent: where it asks for it, it gets `not-found` or
    `denied`."""
    if agent.component is None:
        return []
    problems = []
    for asked in toolings_asked(agent.component):
        if asked.tooling in agent.toolings:
            continue
        what = f"[agents.{name}]: its guest asks for tooling {asked.tooling!r} ({asked.where}), which"
        if asked.tooling not in config.toolings:
            fix = f"add a [tooling.{asked.tooling}] table and grant it in toolings"
            problems.append(f"{what} {config.describe_source()} does not define: {fix}")
        else:
            problems.append(f'{what} the agent is not granted: add "{asked.tooling}" to toolings in {agent.origin}')
    return problems


def connect_all(host: Host) -> list[tuple[str, ToolingError | None]]:
    """Start (or reach) every configured tooling and complete its handshake, in name order: each
    with the error that stopped it, or None."""
    session = operator_session(host, "config-check")
    results: list[tuple[str, ToolingError | None]] = []
    for name in sorted(host.config.toolings):
        try:
            session.get(name)
        except ToolingError as exc:
            results.append((name, exc))
            continue
        results.append((name, None))
    return results
