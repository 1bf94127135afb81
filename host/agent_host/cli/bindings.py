"""`agent-host bindings [DIR]`: typed stubs of the guest API for pyright, mypy and editors; with
`--lang ts`, TypeScript declarations for JavaScript guests (`agent_host.components.ts_bindings`).

The folder's path goes to stdout, how to use it to stderr. DIR defaults to `./typings`
(`agent_host.components.bindings.DEFAULT_FOLDER`); an older copy written by this command is replaced, any other
existing folder is refused (see `agent_host.components.bindings`).
"""

from __future__ import annotations

from pathlib import Path

import click

from agent_host.cli import render
from agent_host.cli.options import State, common_options, epilog
from agent_host.errors import ExitCode

HELP = """\b
Write typed bindings of the guest API into DIR (default: ./typings): wit_world and
componentize_py_types as componentize-py generates them from the WIT, and agentlib.
Guests made by 'agent-host new' point pyright and mypy at ./typings (pyrightconfig.json,
mypy.ini); pyright also finds ./typings by itself. Run it again after upgrading agent-host.
Keep DIR out of guest folders. With --lang ts: TypeScript declarations of the world and of
agentlib for JavaScript guests (default DIR ./typings-ts), which 'agent-host new --lang js'
points at."""


@click.command(
    "bindings", help=HELP, epilog=epilog(0, 2), short_help="Write typed bindings for editors and type checkers."
)
@click.argument("folder", metavar="[DIR]", required=False, type=click.Path(file_okay=False))
@click.option(
    "--lang",
    type=click.Choice(["python", "ts"]),
    default="python",
    show_default=True,
    help="python: stubs for pyright and mypy (default DIR ./typings); ts: TypeScript declarations of the world (by "
    "jco) and of agentlib for JavaScript guests (default DIR ./typings-ts; needs node and npm).",
)
@common_options
@click.pass_obj
def command(state: State, folder: str | None, lang: str) -> int:
    from agent_host.cli.signals import signals

    if lang == "ts":
        from agent_host.components.ts_bindings import DEFAULT_FOLDER as TS_FOLDER
        from agent_host.components.ts_bindings import write_ts_bindings

        with signals() as stopper:
            written = write_ts_bindings(Path(folder) if folder else TS_FOLDER, stop=stopper.token)
        render.line(str(written))
        render.note("a guest made by agent-host new --lang js includes them in its jsconfig.json (tsc -p GUEST)")
        return ExitCode.SUCCESS
    from agent_host.components.bindings import DEFAULT_FOLDER, write_bindings

    with signals() as stopper:
        written = write_bindings(Path(folder) if folder else DEFAULT_FOLDER, stop=stopper.token)
    render.line(str(written))
    render.note(
        "check a guest made by agent-host new with: pyright -p GUEST, or mypy --config-file GUEST/mypy.ini GUEST"
    )
    return ExitCode.SUCCESS
