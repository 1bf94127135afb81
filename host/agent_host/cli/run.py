"""`agent-host run`: one guest (its answer on stdout), or several agents (a table of outcomes).

One guest: GUEST (a folder, built on demand, or a .wasm) or `--agent NAME`'s component; stdout is
exactly its answer, how it failed goes to stderr; `--json` prints `{agent, status, exit_code,
duration, output}` instead (also for a guest that could not start or was stopped before it started:
its status is then the reason's reference, such as `build-error` or `interrupted`). Several agents (no GUEST, and
`--agent` repeated or absent): every one runs at once on one host; an agent that cannot start is
its own row; the exit code is the worst. A signal's exit code (130, 143) wins over every other,
and an agent it stopped is told as `interrupted` with that exit code (as one it kept from starting).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click

from agent_host._support.printable import printable
from agent_host.cli import render
from agent_host.cli.options import (
    State,
    Where,
    allow_option,
    approve_option,
    approver,
    common_options,
    complete_agents,
    epilog,
    executor_options,
    input_option,
    module_option,
)
from agent_host.errors import ExitCode, HostError, UsageError
from agent_host.model import RunResult, RunStatus

if TYPE_CHECKING:
    from agent_host.app.runs import AgentRun, Finished
    from agent_host.cli.signals import Stopper
    from agent_host.config import AgentConfig, Config
    from agent_host.runtime.guest import GuestThread
    from agent_host.session.cassette import Tapes
logger = logging.getLogger("agent_host")

HELP = """\b
Run GUEST's run(input) in a sandbox and print the string it returns on stdout.
GUEST is a guest folder (app.py: built with componentize-py; app.js: componentize-js; on demand, cached) or a
.wasm component.
With --agent NAME, the [agents.NAME] table gives the component, input, grants and limits.
Without GUEST and --agent, every [agents.*] runs at once, sharing connections; with --agent
repeated, those agents do. A table of outcomes follows and the exit code is the worst one;
an agent that cannot be built or compiled is its own row, and the others still run.
A guest may use only the toolings it is granted: [agents.NAME] toolings, or --allow
(the embedded default configuration grants its tooling demo; a config file, its [host] allow).
SIGINT/SIGTERM stop every step (build, compile, connect, run) and cancel what guests opened
(exit 130/143); a second signal exits at once."""

COLUMNS: Final = (
    render.Column("AGENT"),
    render.Column("OUTCOME", styled=True),
    render.Column("TIME", right=True),
    render.Column("DETAIL"),
)

STILL_RUNNING: Final = 10.0
"""Seconds between `still running` notes of a run shown on a terminal."""

DETAIL_WIDTH: Final = 100
"""Characters of an outcome's text shown in the table."""


@click.command(
    "run",
    help=HELP,
    epilog=epilog(0, 1, 2, 3, 4, 130, 143),
    short_help="Run a guest (folder or .wasm), or every configured agent.",
)
@click.argument("guest", required=False, metavar="[GUEST]", type=click.Path())
@input_option
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="NAME",
    shell_complete=complete_agents,
    help="Use the settings of [agents.NAME]; repeat it to run several agents (a table of outcomes).",
)
@allow_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    default=False,
    help="Print the outcome as JSON: {agent, status, exit_code, duration, output} (a list for several agents); "
    'a command that fails before any agent runs prints {"error": {"code", "message", "data"}}.',
)
@approve_option
@module_option
@click.option(
    "--dev",
    is_flag=True,
    default=False,
    help="Run guest folders from their source with the prebuilt dev runner: no build, no compile per edit "
    "(a JavaScript guest is built from its current source).",
)
@executor_options
@click.option(
    "--record",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a cassette to FILE: every tooling and inbox function the guests called, with its answer, "
    "keyed by agent (one file for several agents).",
)
@click.option(
    "--replay",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Answer every tooling and inbox function from the cassette FILE, with the recorded input: no server is "
    "started, no wait is made; a guest asking for anything else ends `diverged` (exit 4).",
)
@common_options
@click.pass_obj
def command(
    state: State,
    guest: str | None,
    input_spec: str | None,
    agents: tuple[str, ...],
    allow: tuple[str, ...],
    as_json: bool,
    approve: str,
    module: str | None,
    dev: bool,
    executor: str | None,
    ray_address: str | None,
    record: Path | None,
    replay: Path | None,
) -> int:
    from agent_host.app import runs

    config = state.load_config()
    where = Where.of(config, executor, ray_address, approve, dev)
    cassette = _Cassette.of(config, record, replay, input_spec)
    names = list(dict.fromkeys(agents))
    if guest is None and len(names) != 1:
        return _run_many(state, config, names, input_spec, allow, as_json, approve, dev, where, cassette)
    if len(names) > 1:
        raise UsageError(
            f"GUEST {guest} with {len(names)} --agent options: with a GUEST, name at most one agent",
            hint="drop GUEST to run the agents with their own components",
        )
    agent = runs.agent_settings(config, names[0]) if names else None
    if guest is not None and agent is None:
        agent = _agent_of(config, Path(guest))
    spec: Path | None
    if guest is not None:
        spec = Path(guest)
    elif agent is not None and agent.component is not None:
        spec = agent.component
    elif agent is not None and agent.code is not None:
        spec = None  # a code agent: the runner runs its input
        if dev:
            raise UsageError(f"[agents.{agent.name}] is a code agent: it has no guest folder for --dev to run")
    else:
        raise UsageError(
            f'[agents.{names[0]}] has no `component` and no `code`; give a GUEST (folder or .wasm) or `code = "python"`'
        )
    input_text = read_input(input_spec, agent)
    if agent is not None:
        name = agent.name
    else:
        assert spec is not None, "without an agent, a GUEST is given"
        name = spec.stem if spec.suffix == ".wasm" else spec.resolve().name
    input_text = cassette.input(name, input_text, given=input_spec is not None)
    guest_run = _Guest(spec, name, agent, input_text, module, dev)
    return _run_one(state, config, guest_run, allow, as_json, approve, where, cassette)


def _lines(text: str) -> str:
    """` TEXT` when `text` is one line, else each line on its own, indented (a code agent's traceback);
    escaped either way, so that nothing of it reads as a line of the host's."""
    lines = text.split("\n")
    if len(lines) == 1:
        return f" {printable(text)}"
    return "".join(f"\n  {printable(line)}" for line in lines)


def _agent_of(config: Config, guest: Path) -> AgentConfig | None:
    """The one `[agents.NAME]` whose component is `guest` (said on stderr), else None; when several
    are, a note names them (their settings need `--agent NAME`)."""
    try:
        wanted = guest.resolve()
    except OSError:
        return None
    owners = [
        agent
        for _, agent in sorted(config.agents.items())
        if agent.component is not None and _same(agent.component, wanted)
    ]
    if len(owners) == 1:
        render.note(
            f"{guest} is the component of [agents.{owners[0].name}]: running with its settings ({owners[0].origin})"
        )
        return owners[0]
    if owners:
        names = ", ".join(agent.name for agent in owners)
        render.note(
            f"{guest} is the component of agents {names}: running with the [host] defaults; "
            "pass --agent NAME for one's settings"
        )
    return None


def _same(component: Path, wanted: Path) -> bool:
    try:
        return component.resolve() == wanted
    except OSError:
        return False


@dataclass(frozen=True)
class _Cassette:
    """`--record` or `--replay` (`agent_host.session.cassette`): what the host records into or replays
    from, and the file; `tapes` None for neither."""

    path: Path | None = None
    tapes: Tapes | None = None

    @classmethod
    def of(cls, config: Config, record: Path | None, replay: Path | None, input_spec: str | None) -> _Cassette:
        """From the options; `UsageError` for a combination that cannot work, `CassetteError` for a
        cassette that cannot be replayed."""
        from agent_host.session import cassette

        if record is not None and replay is not None:
            raise UsageError("--record and --replay: choose one", hint="record once, then replay the file")
        chosen = record if record is not None else replay
        if chosen is None:
            return cls()
        if replay is None:
            assert record is not None
            cassette.check_target(record)  # before the run: a file of something else is never lost
            recording = cassette.Recording(config.secrets)
            if recording.scrub.short:
                render.error(
                    f"--record {record}: {len(recording.scrub.short)} value(s) the configuration takes from the "
                    f"environment are shorter than {cassette.MIN_SECRET_CHARS} characters: they are written as they "
                    "are (replaced, they would match anywhere)",
                    kind="warning",
                )
            return cls(record, recording)
        return cls(replay, cassette.Playback(cassette.load(replay), replay, config.secrets))

    def input(self, agent: str, text: str, *, given: bool = False) -> str:
        """The input of `agent`: on replay the recorded one (when recorded; `ReplayDiverged` when
        `given` on the command line and another: the replay diverged before it starts), else `text`."""
        from agent_host.session.cassette import Playback

        if isinstance(self.tapes, Playback) and agent in self.tapes.cassette.agents:
            if given:
                self.tapes.check_input(agent, text)
            return self.tapes.cassette.agents[agent].input
        return text

    def save(self, exit_code: int, stopped: bool = False) -> int:
        """Write the recording (when recording, and the command was not `stopped` by a signal: the
        file stays as it was); the exit code, 2 at least when it cannot be written."""
        from agent_host.errors import CassetteError
        from agent_host.session.cassette import Recording, save

        if not isinstance(self.tapes, Recording) or self.path is None:
            return exit_code
        if stopped:
            render.error(f"--record {self.path}: not written: the command was stopped", kind="stopped")
            return exit_code
        try:
            save(self.tapes.cassette, self.path)
        except CassetteError as exc:
            render.error(str(exc))
            return exit_code if exit_code > ExitCode.USAGE_ERROR else ExitCode.USAGE_ERROR
        return exit_code


def _on_ray(
    state: State,
    config: Config,
    runs: Sequence[AgentRun],
    allow: Sequence[str],
    approve: str,
    where: Where,
    stopper: Stopper,
    tapes: Tapes | None,
) -> list[Finished]:
    """Run `runs` on Ray (started for the command, or joined) with the same results as locally."""
    from agent_host.cluster.connection import ray_cluster
    from agent_host.cluster.executor import RayExecutor

    with ray_cluster(where.ray_address, stopper.token, verbose=state.debug) as cluster:
        executor = RayExecutor(config, cluster, approve=approve, stop=stopper.token, tapes=tapes)
        stopper.host = executor
        return executor.run_all(runs, allow)


@dataclass(frozen=True)
class _Guest:
    """What one run is of: the component (`module`: of a guest folder), the agent's name and
    settings, the input."""

    spec: Path | None
    """The GUEST (None: the agent's `code` says what runs)."""
    name: str
    agent: AgentConfig | None
    input: str
    module: str | None
    dev: bool = False
    """Run the guest folder from its source with the dev runner (`agent_host.app.devmode`)."""


def _run_one(
    state: State,
    config: Config,
    guest: _Guest,
    allow: Sequence[str],
    as_json: bool,
    approve: str,
    where: Where,
    cassette: _Cassette,
) -> int:
    from agent_host.app import devmode, runs
    from agent_host.cli.signals import signals
    from agent_host.components.build import resolve_component
    from agent_host.components.code_runners import agent_component
    from agent_host.errors import Interrupted

    name = guest.name
    with signals() as stopper:
        try:
            if guest.spec is None:
                assert guest.agent is not None, "a run without a GUEST is an agent's"
                wasm = agent_component(guest.agent, stopper.token)
            elif guest.dev:
                wasm = devmode.dev_component(guest.spec, guest.module, stopper.token)
            else:
                wasm = resolve_component(guest.spec, module=guest.module, stop=stopper.token)
            if where.ray:
                run = runs.AgentRun(name, guest.agent, guest.input, wasm)
                done = _on_ray(state, config, [run], allow, approve, where, stopper, cassette.tapes)[0]
                if done.failure is not None:
                    raise done.failure
                outcome = done.outcome
            else:
                outcome = _run_here(state, config, guest, wasm, allow, approve, stopper, cassette.tapes)
        except HostError as exc:
            if not as_json:
                raise
            if isinstance(exc, Interrupted):  # its row says so, the exit code is the signal's
                render.error(str(exc), kind="stopped")
            else:
                render.error(f"agent {name}: {exc}")
            outcome = RunResult.not_started(name, exc)
    outcome = as_stopped(outcome, stopper.exit_code)
    if as_json:
        render.json_out(outcome_json(outcome))
    elif outcome.status is RunStatus.OK:
        render.answer(outcome.text)
    if outcome.status is RunStatus.ERROR:
        render.report(f"agent {name} failed:" + _lines(outcome.text))
    elif outcome.status in (RunStatus.TRAP, RunStatus.CRASHED, RunStatus.INTERRUPTED):
        render.report(f"agent {name} was stopped:" + _lines(outcome.text))
    elif outcome.status is RunStatus.DIVERGED:
        render.report(printable(outcome.text))
    if outcome.status in (RunStatus.ERROR, RunStatus.TRAP):
        _advise(outcome, guest.spec if guest.spec is not None and guest.spec.is_dir() else None)
    logger.debug("agent %s: %s in %.2f s", name, outcome.status, outcome.duration)
    stopped = stopper.exit_code is not None
    return cassette.save(stopper.exit_code if stopper.exit_code is not None else outcome.exit_code, stopped)


def _run_here(
    state: State,
    config: Config,
    guest: _Guest,
    wasm: Path,
    allow: Sequence[str],
    approve: str,
    stopper: Stopper,
    tapes: Tapes | None,
) -> RunResult:
    """Run one guest on a host in this process."""
    from agent_host.app import devmode
    from agent_host.app.host import Host

    with Host(config, keep_logs=state.debug, approver=approver(approve), stop=stopper.token, tapes=tapes) as host:
        stopper.host = host
        policy = host.policy(guest.name, guest.agent, allow)
        if guest.dev and guest.spec is not None:
            policy = devmode.dev_policy(policy, guest.spec, guest.module)
        started = host.start(wasm, guest.input, agent=guest.name, policy=policy)
        return host.wait(started, _StillRunning() if _on_terminal() and not state.quiet else None)


def _on_terminal() -> bool:
    """Whether stderr is a terminal (a person watching)."""
    return sys.stderr.isatty()


class _StillRunning:
    """On a terminal: a note every `STILL_RUNNING` seconds of a run, its time against its limits and
    how to stop it (a loop that only the CPU limit ends is otherwise a minute of silence)."""

    def __init__(self) -> None:
        self._next = time.monotonic() + STILL_RUNNING

    def __call__(self, guest: GuestThread) -> None:
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + STILL_RUNNING
        usage = guest.usage()
        if usage is not None:
            render.note(f"agent {guest.agent} still running: {usage}; Ctrl-C stops it")


def _run_many(
    state: State,
    config: Config,
    names: list[str],
    input_spec: str | None,
    allow: Sequence[str],
    as_json: bool,
    approve: str,
    dev: bool,
    where: Where,
    cassette: _Cassette,
) -> int:
    """Run the named agents (default: every [agents.*]) at once; a table (or JSON) of outcomes."""
    from agent_host.app import runs
    from agent_host.app.host import Host
    from agent_host.cli.signals import signals
    from agent_host.errors import Interrupted

    agents = runs.select_agents(config, names)
    given = read_input(input_spec, None) if input_spec is not None else None
    with signals() as stopper:
        prepared = [
            _replayed(run, cassette, given is not None) for run in runs.prepare(agents, given, stopper.token, dev=dev)
        ]
        for run in prepared:
            if run.failure is not None and not isinstance(run.failure, Interrupted):
                render.error(f"agent {run.name}: {run.failure}")
        if where.ray:
            finished = _on_ray(state, config, prepared, allow, approve, where, stopper, cassette.tapes)
        else:
            with Host(
                config, keep_logs=state.debug, approver=approver(approve), stop=stopper.token, tapes=cassette.tapes
            ) as host:
                stopper.host = host
                finished = runs.run_all(host, prepared, allow)
    for run, done in zip(prepared, finished, strict=True):
        if done.failure is not None and run.failure is None and not isinstance(done.failure, Interrupted):
            render.error(f"agent {run.name}: {done.failure}")
    outcomes = [as_stopped(done.outcome, stopper.exit_code) for done in finished]
    if as_json:
        render.json_out([outcome_json(outcome) for outcome in outcomes])
    else:
        rows = [[o.agent, o.status, f"{o.duration:.2f}s", render.one_line(o.text, DETAIL_WIDTH)] for o in outcomes]
        render.table(COLUMNS, rows)
        folders = {run.name: run.source or run.settings.component if run.settings else None for run in prepared}
        for outcome in outcomes:
            if outcome.status in (RunStatus.ERROR, RunStatus.TRAP):
                folder = folders.get(outcome.agent)
                _advise(outcome, folder if folder is not None and folder.is_dir() else None, agent=outcome.agent)
    worst = max(outcome.exit_code for outcome in outcomes)
    return cassette.save(stopper.exit_code if stopper.exit_code is not None else worst, stopper.exit_code is not None)


def _replayed(run: AgentRun, cassette: _Cassette, given: bool) -> AgentRun:
    """`run` with the input it replays (its failure, when another input was `given`)."""
    from agent_host.errors import ReplayDiverged

    try:
        return dataclasses.replace(run, input=cassette.input(run.name, run.input, given=given))
    except ReplayDiverged as exc:
        return dataclasses.replace(run, failure=exc)


def _advise(outcome: RunResult, folder: Path | None, agent: str | None = None) -> None:
    """The hint lines for what a failed or trapped run names (`trap_reasons.advice`), on stderr."""
    from agent_host.runtime.trap_reasons import advice

    for hint in advice(outcome.text, str(folder) if folder is not None else None):
        render.hint(f"agent {agent}: {hint}" if agent is not None else hint)


def as_stopped(outcome: RunResult, exit_code: int | None) -> RunResult:
    """`outcome` as the command tells it once a signal stopped the command (`exit_code` 130 or 143,
    else None): a run the host stopped for it is `interrupted` with that exit code, as an agent the
    signal kept from starting is, not a `trap` (3)."""
    if exit_code is None or outcome.tripped != "stopped":
        return outcome
    return dataclasses.replace(outcome, status=RunStatus.INTERRUPTED, code=exit_code)


def outcome_json(outcome: RunResult) -> dict[str, Any]:
    """An outcome as `run --json` prints it."""
    return {
        "agent": outcome.agent,
        "status": outcome.status,
        "exit_code": outcome.exit_code,
        "duration": round(outcome.duration, 3),
        "output": outcome.text,
        "usage": {"input_tokens": outcome.usage.input_tokens, "output_tokens": outcome.usage.output_tokens},
    }


def read_input(spec: str | None, agent: AgentConfig | None) -> str:
    """The input: `--input` TEXT, @FILE or - (stdin); else the agent's own; else empty."""
    if spec is None:
        return agent.input if agent is not None and agent.input is not None else ""
    if spec == "-":
        return sys.stdin.read()
    if spec.startswith("@"):
        try:
            return Path(spec[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--input {spec}: cannot read: {exc.strerror or exc}") from None
    return spec
