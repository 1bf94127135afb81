"""`agent-host bindings [DIR]`: typed stubs of the guest API for pyright, mypy and editors.

The folder's path goes to stdout, how to use it to stderr. DIR defaults to `./typings`
(`agent_host.components.bindings.DEFAULT_FOLDER`); an older copy written by this command is replaced, any other
existing folder is refused (see `agent_host.components.bindings`).
"""

from __future__ import annotations

from pathlib import Path

import click

from agent_host.cli import render
from agent_host.cli.options import EPILOG, State, common_options
from agent_host.errors import ExitCode

HELP = """\b
Write typed bindings of the guest API into DIR (default: ./typings): wit_world and
componentize_py_types as componentize-py generates them from the WIT, and agentlib.
Guests made by 'agent-host new' point pyright and mypy at ./typings (pyrightconfig.json,
mypy.ini); pyright also finds ./typings by itself. Run it again after upgrading agent-host.
Keep DIR out of guest folders."""


@click.command("bindings", help=HELP, epilog=EPILOG, short_help="Write typed bindings for editors and type checkers.")
@click.argument("folder", metavar="[DIR]", required=False, type=click.Path(file_okay=False))
@common_options
@click.pass_obj
def command(state: State, folder: str | None) -> int:
    from agent_host.cli.signals import signals
    from agent_host.components.bindings import DEFAULT_FOLDER, write_bindings

    with signals() as stopper:
        written = write_bindings(Path(folder) if folder else DEFAULT_FOLDER, stop=stopper.token)
    render.line(str(written))
    render.note(
        "check a guest made by agent-host new with: pyright -p GUEST, or mypy --config-file GUEST/mypy.ini GUEST"
    )
    return ExitCode.SUCCESS
