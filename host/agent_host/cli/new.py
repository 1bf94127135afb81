"""`agent-host new`: a guest folder from the templates in `host/agent_host/components/templates/`.

The folder gets `app.py`, and `pyrightconfig.json` and `mypy.ini` that check it as Python 3.14 (the
guest's Python) against the bindings folder (`--bindings`, default `./typings`), named by a path
relative to the guest folder. NAME must be a valid agent name (`config.name_problem`); the folder
must not exist. The folder's path goes to stdout; how to run it, and how to write the bindings when
they are not current, to stderr (paths quoted for the shell).
"""

from __future__ import annotations

import json
import os
import shlex
import string
from pathlib import Path
from typing import Final

import click

from agent_host._support.paths import template
from agent_host.cli import render
from agent_host.cli.options import EPILOG, State, common_options
from agent_host.errors import ExitCode, UsageError

TEMPLATE = "guest_app.py.txt"
TYPE_CHECKER_TEMPLATES: Final = {"pyrightconfig.json": "pyrightconfig.json.txt", "mypy.ini": "mypy.ini.txt"}
"""Files of a new guest folder that point type checkers at the bindings, by their templates."""


@click.command(
    "new",
    help="Create DIR/NAME/app.py, a minimal agent, with pyrightconfig.json and mypy.ini for type checking. "
    "NAME: letters, digits, '-' and '_' (also the folder's name).",
    epilog=EPILOG,
    short_help="Create a guest folder from a template.",
)
@click.argument("name", metavar="NAME")
@click.option(
    "--dir", "parent", default="guests", show_default=True, metavar="DIR", type=click.Path(), help="Parent folder."
)
@click.option(
    "--bindings",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Folder of the typed bindings (agent-host bindings) that the guest's pyrightconfig.json and mypy.ini "
    "point at (default: ./typings).",
)
@common_options
@click.pass_obj
def command(state: State, name: str, parent: str, bindings: str | None) -> int:
    from agent_host.components.bindings import DEFAULT_FOLDER
    from agent_host.components.bindings import state as bindings_state

    folder_of_bindings = Path(bindings) if bindings else DEFAULT_FOLDER
    folder = new_guest(Path(parent), name, bindings=folder_of_bindings)
    render.line(str(folder))
    render.note(f"run it with: agent-host run {shlex.quote(str(folder))}")
    hint = _BINDINGS_HINTS.get(bindings_state(folder_of_bindings).value)
    if hint is not None:
        write = "agent-host bindings" + (f" {shlex.quote(bindings)}" if bindings else "")
        render.note(hint.format(folder=shlex.quote(str(folder_of_bindings)), command=write))
    return ExitCode.SUCCESS


_BINDINGS_HINTS: Final = {
    "missing": "for completion and type checking (pyright, mypy), write the bindings: {command}",
    "stale": "the bindings in {folder} are out of date; write them again: {command}",
    "foreign": "{folder} was not written by agent-host bindings; the guest's pyrightconfig.json and mypy.ini "
    "point at it (pass --bindings DIR to choose another folder)",
}
"""What `new` says about the bindings folder, by `agent_host.components.bindings.State` value (nothing when current)."""


def new_guest(parent: Path, name: str, *, bindings: Path | None = None) -> Path:
    """Write `parent/name/app.py` from the template, and the type checkers' settings pointing at the
    folder `bindings` (default: `agent_host.components.bindings.DEFAULT_FOLDER`); the folder. Raises `UsageError` for
    an invalid name or a folder that exists (nothing is written then)."""
    from agent_host.components.bindings import DEFAULT_FOLDER
    from agent_host.config import name_problem

    problem = name_problem(name)
    if problem is not None:
        raise UsageError(problem, hint="for example: agent-host new my-agent")
    folder = parent / name
    if folder.exists():
        raise UsageError(f"{shlex.quote(str(folder))} already exists", hint="choose another NAME or --dir")
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(string.Template(template(TEMPLATE)).substitute(name=name), encoding="utf-8")
    relative = Path(os.path.relpath((bindings or DEFAULT_FOLDER).absolute(), folder.absolute())).as_posix()
    values = {"name": name, "bindings": relative, "bindings_json": json.dumps(relative)}
    for filename, source in TYPE_CHECKER_TEMPLATES.items():
        (folder / filename).write_text(string.Template(template(source)).substitute(values), encoding="utf-8")
    return folder
