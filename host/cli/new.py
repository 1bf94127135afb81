"""`agent-host new`: a guest folder from the template (`host/templates/guest_app.py.txt`).

NAME must be a valid agent name (`config.name_problem`); the folder must not exist. The folder's
path goes to stdout, how to run it to stderr (paths quoted for the shell).
"""

from __future__ import annotations

import shlex
import string
from pathlib import Path

import click

from host import status_codes
from host.cli import render
from host.cli.options import EPILOG, State, common_options
from host.errors import UsageError
from host.paths import template

TEMPLATE = "guest_app.py.txt"


@click.command(
    "new", help="Create DIR/NAME/app.py, a minimal agent. NAME: letters, digits, '-' and '_' (also the folder's name).",
    epilog=EPILOG,
    short_help="Create a guest folder from a template.",
)  # fmt: skip
@click.argument("name", metavar="NAME")
@click.option(
    "--dir", "parent", default="guests", show_default=True, metavar="DIR", type=click.Path(), help="Parent folder."
)
@common_options
@click.pass_obj
def command(state: State, name: str, parent: str) -> int:
    folder = new_guest(Path(parent), name)
    render.line(str(folder))
    render.note(f"run it with: agent-host run {shlex.quote(str(folder))}")
    return status_codes.SUCCESS


def new_guest(parent: Path, name: str) -> Path:
    """Write `parent/name/app.py` from the template; the folder. Raises `UsageError` for an invalid
    name or a folder that exists (nothing is written then)."""
    from host.config import name_problem

    problem = name_problem(name)
    if problem is not None:
        raise UsageError(problem, hint="for example: agent-host new my-agent")
    folder = parent / name
    if folder.exists():
        raise UsageError(f"{shlex.quote(str(folder))} already exists", hint="choose another NAME or --dir")
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(string.Template(template(TEMPLATE)).substitute(name=name), encoding="utf-8")
    return folder
