"""`agent-host dev GUEST`: run a guest folder from its source, and again on every save.

Dev mode (`agent_host.app.devmode`): no build or compile per edit of a Python guest (its syntax is
checked first), a JavaScript guest built again from each save; a syntax error or a broken build is
reported and the next save waited for. Each run prints the answer on stdout (a newline after it),
its duration or how it failed on stderr, then waits for a change; a run still going when the source
changes is stopped and started again with the new code. The host, and so every tooling
connection, stays up across runs. SIGINT/SIGTERM end the watch (exit 130/143).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agent_host.cli import render
from agent_host.cli.options import (
    State,
    allow_option,
    common_options,
    complete_agents,
    epilog,
    input_option,
    module_option,
)
from agent_host.cli.run import read_input
from agent_host.errors import BuildError, ExitCode

if TYPE_CHECKING:
    from agent_host._support.stopping import StopToken
    from agent_host.app import devmode


@click.command(
    "dev",
    epilog=epilog(0, 1, 2, 3, 130, 143),
    short_help="Run a guest folder from its source, again on every save.",
    help="Run GUEST (a guest folder; default: --agent's component) from its source with the prebuilt dev runner "
    "(a JavaScript guest: built from each save), then again each time a file of the folder changes, keeping the "
    "tooling connections open. Ctrl-C ends it.",
)
@click.argument("guest", required=False, metavar="[GUEST]", type=click.Path(exists=True, file_okay=False))
@input_option
@click.option(
    "--agent",
    metavar="NAME",
    shell_complete=complete_agents,
    help="Use the grants, limits and input of [agents.NAME].",
)
@allow_option
@module_option
@click.option(
    "--once", is_flag=True, default=False, help="Run once and exit (what `run --dev` does), without watching."
)
@click.option(
    "--prepare",
    is_flag=True,
    default=False,
    help="Only build and compile the dev runner (once, ~25 s; cached for every Python guest), so that the first "
    "dev run starts at once; no GUEST.",
)
@common_options
@click.pass_obj
def command(
    state: State,
    guest: str | None,
    input_spec: str | None,
    agent: str | None,
    allow: tuple[str, ...],
    module: str | None,
    once: bool,
    prepare: bool,
) -> int:
    from agent_host.app import devmode, runs
    from agent_host.app.host import Host
    from agent_host.cli.signals import signals
    from agent_host.components import dev_runner
    from agent_host.errors import UsageError

    if prepare:
        with signals(raise_at_once=True) as stopper:
            prepared = devmode.prepare_runner(stopper.token)
        render.line(str(prepared))
        return ExitCode.SUCCESS
    config = state.load_config()
    settings = runs.agent_settings(config, agent) if agent else None
    if guest is not None:
        folder = Path(guest)
    elif settings is not None and settings.component is not None:
        folder = settings.component
    else:
        raise UsageError("give a GUEST folder, or --agent NAME whose [agents.NAME] has a `component` folder")
    devmode.check_source(folder, module)
    javascript = devmode.is_javascript(folder, module)  # no runner: each change is built (see app.devmode)
    input_text = read_input(input_spec, settings)
    name = settings.name if settings is not None else folder.resolve().name
    last = 0
    with signals() as stopper:
        if not javascript:  # the runner, built before the watch starts (once; cached after)
            dev_runner.runner_component(stopper.token)
        with Host(config, keep_logs=state.debug, stop=stopper.token) as host, devmode.SourceWatch(folder) as watch:
            stopper.host = host
            policy = devmode.dev_policy(host.policy(name, settings, allow), folder, module)
            while not stopper.token.stopped:
                watch.require_folder()  # gone: dev mode stops (a save that breaks the guest does not)
                try:  # the runner, the guest's syntax checked first; a JavaScript guest built (cached when unchanged)
                    wasm = devmode.dev_component(folder, module, stopper.token)
                except BuildError as exc:  # a broken save: say why and wait for the next one
                    render.report(str(exc))
                    last = exc.exit_code
                    if once or not _watch_again(folder, watch, stopper.token):
                        break
                    continue
                outcome = devmode.run_until_changed(host, wasm, input_text, name, policy, watch)
                if outcome is None:
                    render.note(f"{folder}: changed while running: starting again")
                    continue
                last = outcome.exit_code
                _show(name, outcome.status, outcome.text, outcome.duration)
                if once or stopper.token.stopped:  # a signal ended the run: no more watching
                    break
                if not _watch_again(folder, watch, stopper.token):
                    break
    return stopper.exit_code if stopper.exit_code is not None else last


def _watch_again(folder: Path, watch: devmode.SourceWatch, stop: StopToken) -> bool:
    """Say so and wait for the next change of `folder`: False when a stop came first."""
    render.note(f"watching {folder} (Ctrl-C to stop)")
    return watch.wait(stop)


def _show(name: str, status: str, text: str, duration: float) -> None:
    if status == "ok":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        render.note(f"agent {name}: ok in {duration:.2f} s")
    elif status == "error":
        render.report(f"agent {name} failed in {duration:.2f} s: {text}")
    else:
        render.report(f"agent {name} was stopped after {duration:.2f} s: {text}")
