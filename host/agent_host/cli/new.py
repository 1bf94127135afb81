"""`agent-host new`: a guest folder from the templates in `host/agent_host/components/templates/`.

With `--lang js`: `app.js` and a `jsconfig.json` checking it against the TypeScript declarations of
`agent-host bindings --lang ts` (default `./typings-ts`).

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
from agent_host.cli.options import State, common_options, epilog
from agent_host.errors import ExitCode, UsageError

TEMPLATE = "guest_app.py.txt"
TYPE_CHECKER_TEMPLATES: Final = {"pyrightconfig.json": "pyrightconfig.json.txt", "mypy.ini": "mypy.ini.txt"}
"""Files of a new guest folder that point type checkers at the bindings, by their templates."""


@click.command(
    "new",
    help="Create DIR/NAME/app.py, a minimal agent, with pyrightconfig.json and mypy.ini for type checking "
    "(--lang js: DIR/NAME/app.js with jsconfig.json). NAME: letters, digits, '-' and '_' (also the folder's name).",
    epilog=epilog(0, 2),
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
    "point at (default: ./typings; with --lang js, the jsconfig.json at ./typings-ts).",
)
@click.option(
    "--lang",
    type=click.Choice(["python", "js"]),
    default="python",
    show_default=True,
    help="python: app.py, pyrightconfig.json, mypy.ini; js: app.js (an ES module exporting run) and jsconfig.json.",
)
@common_options
@click.pass_obj
def command(state: State, name: str, parent: str, bindings: str | None, lang: str) -> int:
    from agent_host.components import ts_bindings
    from agent_host.components.bindings import DEFAULT_FOLDER
    from agent_host.components.bindings import state as bindings_state

    if lang == "js":
        folder_of_bindings = Path(bindings) if bindings else ts_bindings.DEFAULT_FOLDER
        folder = new_js_guest(Path(parent), name, bindings=folder_of_bindings)
        now = bindings_state(folder_of_bindings, ts_bindings.ts_bindings_key()).value
        write = "agent-host bindings --lang ts"
    else:
        folder_of_bindings = Path(bindings) if bindings else DEFAULT_FOLDER
        folder = new_guest(Path(parent), name, bindings=folder_of_bindings)
        now = bindings_state(folder_of_bindings).value
        write = "agent-host bindings"
    render.line(str(folder))
    quoted = shlex.quote(str(folder))
    if lang == "js":
        render.note(f"try it: agent-host dev {quoted} (runs it again on every save; each save is built, ~10 s)")
    else:
        render.note(
            f"try it: agent-host dev {quoted} (runs it from its source again on every save, no build; the first dev "
            "run of all builds the dev runner once, ~25 s)"
        )
    render.note(
        f"build and run it: agent-host run {quoted} (the first build takes 20-30 s and ~50 MB of cache; "
        "agent-host cache prune bounds the cache)"
    )
    hint = _BINDINGS_HINTS.get(now)
    if hint is not None:
        write += f" {shlex.quote(bindings)}" if bindings else ""
        render.note(hint.format(folder=shlex.quote(str(folder_of_bindings)), command=write))
    return ExitCode.SUCCESS


_BINDINGS_HINTS: Final = {
    "missing": "for completion and type checking, write the bindings: {command}",
    "stale": "the bindings in {folder} are out of date; write them again: {command}",
    "foreign": "{folder} was not written by agent-host bindings; the guest's type checker settings "
    "point at it (pass --bindings DIR to choose another folder)",
}
"""What `new` says about the bindings folder, by `agent_host.components.bindings.State` value (nothing when current)."""


def new_guest(parent: Path, name: str, *, bindings: Path | None = None) -> Path:
    """Write `parent/name/app.py` from the template, and the type checkers' settings pointing at the
    folder `bindings` (default: `agent_host.components.bindings.DEFAULT_FOLDER`); the folder. Raises `UsageError` for
    an invalid name or a folder that exists (nothing is written then)."""
    from agent_host.components.bindings import DEFAULT_FOLDER

    folder = _new_folder(parent, name)
    (folder / "app.py").write_text(string.Template(template(TEMPLATE)).substitute(name=name), encoding="utf-8")
    relative = Path(os.path.relpath((bindings or DEFAULT_FOLDER).absolute(), folder.absolute())).as_posix()
    values = {"name": name, "bindings": relative, "bindings_json": json.dumps(relative)}
    for filename, source in TYPE_CHECKER_TEMPLATES.items():
        (folder / filename).write_text(string.Template(template(source)).substitute(values), encoding="utf-8")
    return folder


JS_TEMPLATES: Final = {"app.js": "guest_app.js.txt", "jsconfig.json": "jsconfig.json.txt"}
"""Files of a new JavaScript guest folder, by their templates (placeholders `__NAME__`, `__BINDINGS_GLOB__`:
JavaScript's own `${...}` stays as written)."""


def new_js_guest(parent: Path, name: str, *, bindings: Path) -> Path:
    """Write `parent/name/app.js` and `jsconfig.json` (checking `app.js` against the TypeScript
    declarations in `bindings`); the folder. Raises `UsageError` as `new_guest` does."""
    folder = _new_folder(parent, name)
    relative = Path(os.path.relpath(bindings.absolute(), folder.absolute())).as_posix()
    for filename, source in JS_TEMPLATES.items():
        glob = json.dumps(f"{relative}/**/*.d.ts")
        text = template(source).replace("__NAME__", name).replace("__BINDINGS_GLOB__", glob)
        (folder / filename).write_text(text, encoding="utf-8")
    return folder


def _new_folder(parent: Path, name: str) -> Path:
    from agent_host.config import name_problem

    problem = name_problem(name)
    if problem is not None:
        raise UsageError(problem, hint="for example: agent-host new my-agent")
    folder = parent / name
    if folder.exists():
        raise UsageError(f"{shlex.quote(str(folder))} already exists", hint="choose another NAME or --dir")
    folder.mkdir(parents=True)
    return folder
