"""`agent-host config init|check`: write a starter configuration file, or validate one.

`check` reports every problem, not only the first (components, python tool imports and, with
`--connect`, every tooling's handshake), then fails with exit code 2; a tooling a guest names that
the file does not give its agent is a warning (exit 0; `--strict`: a problem). Every line it writes
goes to stderr in one style, `agent-host: problem: ...`, `agent-host: warning: ...`, then the
verdict, `agent-host: ok: FILE: toolings: ...; agents: ...` or `agent-host: error: FILE: N
problem(s) found`; stdout holds only what `--json` asks for, `{source, ok, toolings, agents,
problems, warnings, connected}`. `schema` prints the JSON Schema of the file for editors.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agent_host.cli import render
from agent_host.cli.options import State, common_options, epilog
from agent_host.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from agent_host.config import Config


@click.group(
    "config",
    epilog=epilog(0, 2, 130, 143),
    short_help="Write or check a configuration file.",
    help="Write a starter file, or validate one.",
)
@common_options
def group() -> None:
    pass


@group.command(
    "init",
    epilog=epilog(0, 2, 130, 143),
    help="Write a commented starter file (an agent for each guest folder in ./guests; in comments when its guest "
    "asks for a tooling the file does not define).",
)
@click.argument("path", required=False, metavar="[PATH]", type=click.Path())
@click.option("--force", is_flag=True, default=False, help="Overwrite an existing file.")
@common_options
@click.pass_obj
def init(state: State, path: str | None, force: bool) -> int:
    from agent_host.components.build import find_guests
    from agent_host.components.needs import toolings_asked
    from agent_host.config import DEFAULT_FILE_NAME, name_problem, starter_config_text, starter_toolings
    from agent_host.errors import UsageError

    target = Path(path or DEFAULT_FILE_NAME)
    if target.exists() and not force:
        raise UsageError(f"{shlex.quote(str(target))} already exists", hint="pass --force to overwrite it")
    base = target.absolute().parent
    guests = [
        (folder.name, folder.relative_to(base).as_posix())
        for folder in find_guests(base)
        if name_problem(folder.name) is None
    ]
    defined = starter_toolings()
    unmet = {
        name: missing
        for name, folder in guests
        if (missing := [a.tooling for a in toolings_asked(base / folder) if a.tooling not in defined])
    }
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(starter_config_text(guests, unmet), encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot write {shlex.quote(str(target))}: {exc.strerror or exc}",
            hint="give a path in a folder you can write to",
        ) from None
    ready = [name for name, _ in guests if name not in unmet]
    agents = f"agents: {', '.join(ready) or 'none'}" if guests else "no guest folders in ./guests yet"
    render.note(f"wrote {target} ({agents})")
    for name, missing in unmet.items():
        names = ", ".join(repr(tooling) for tooling in missing)
        render.note(
            f"agent {name} is left in comments: its guest asks for tooling {names}, which the file does not define "
            "(add the table, then uncomment the agent)"
        )
    render.note(f"check it with: agent-host config check {shlex.quote(str(target))}")
    return ExitCode.SUCCESS


@group.command(
    "check",
    epilog=epilog(0, 2, 130, 143),
    help="Validate a configuration file and report every problem at once: keys and values, components (a .wasm's "
    "imports against what the host provides), python tool imports (--connect: the servers too). A tooling an "
    "agent's guest names that the file does not define or grant is a warning: the guest may reach it only on "
    "some inputs (--strict: an error, for CI).",
)
@click.argument("path", required=False, metavar="[PATH]", type=click.Path())
@click.option(
    "--connect", is_flag=True, default=False, help="Also start (or reach) every tooling and complete the MCP handshake."
)
@click.option("--strict", is_flag=True, default=False, help="Fail (exit 2) on warnings too.")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the result as JSON on stdout.")
@common_options
@click.pass_obj
def check(state: State, path: str | None, connect: bool, strict: bool, as_json: bool) -> int:
    from agent_host.app import inventory
    from agent_host.config import find_config_file, load_config

    file = Path(path) if path else find_config_file(state.config)
    try:
        config = load_config(file)
    except ConfigError as exc:
        if as_json:
            render.json_out(_result(str(file) if file else None, None, list(exc.problems), [], None))
        raise
    problems = inventory.config_problems(config)
    warnings = inventory.config_warnings(config)
    if strict:
        problems, warnings = problems + warnings, []
    from agent_host.cli.signals import signals

    with signals(raise_at_once=True) as stopper:  # a .wasm component is compiled (once) to read its imports
        problems += inventory.import_problems(config, stopper.token)
    connected: list[str] | None = None
    if connect and config.toolings:
        from agent_host.app.host import Host
        from agent_host.cli.signals import signals

        connected = []
        with (
            signals(raise_at_once=True) as stopper,
            stopper.started(lambda: Host(config, stop=stopper.token)) as host,
        ):
            stopper.host = host
            results = inventory.connect_all(host)
        for name, error in results:
            if error is None:
                render.note(f"tooling {name}: connected")
                connected.append(name)
            else:
                problems.append(f"[tooling.{name}]: {error}")
    for problem in problems:
        render.problem(problem)
    for warning in warnings:
        render.error(warning, kind="warning")
    if as_json:
        render.json_out(_result(config.describe_source(), config, problems, warnings, connected))
    if problems:
        raise ConfigError(f"{config.describe_source()}: {len(problems)} problem(s) found (listed above)")
    render.report(ok_line(config, connected=connect, warnings=len(warnings)))
    return ExitCode.SUCCESS


def ok_line(config: Config, *, connected: bool, warnings: int) -> str:
    """The verdict of a file without problems, in the words of the problem lines:
    `ok: FILE: toolings: A, B; agents: C` (with what was connected and how many warnings)."""
    toolings = ", ".join(sorted(config.toolings)) or "none"
    agents = ", ".join(sorted(config.agents)) or "none"
    every = " (every tooling connected)" if connected else ""
    warned = f" ({warnings} warning(s) above)" if warnings else ""
    return f"ok: {config.describe_source()}: toolings: {toolings}; agents: {agents}{every}{warned}"


def _result(
    source: str | None, config: Config | None, problems: list[str], warnings: list[str], connected: list[str] | None
) -> Any:
    return {
        "source": source,
        "ok": not problems,
        "toolings": sorted(config.toolings) if config is not None else [],
        "agents": sorted(config.agents) if config is not None else [],
        "problems": problems,
        "warnings": warnings,
        "connected": connected,
    }


@group.command(
    "schema",
    epilog=epilog(0, 2, 130, 143),
    help="Print the JSON Schema of the file (for editors: agent-host config schema > FILE).",
)
@common_options
@click.pass_obj
def schema(state: State) -> int:
    import sys

    from agent_host.config import schema_text

    sys.stdout.write(schema_text())
    return ExitCode.SUCCESS
