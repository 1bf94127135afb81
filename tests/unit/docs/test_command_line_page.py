"""The commands-at-a-glance table of docs/operators/command-line.md names every option of every command.

Each row starts with `agent-host COMMAND ...`; the rows of a command (and of its subcommands:
`config check`, `cache prune`, ...) together name each of its options as `--help` lists them, but
the options every command takes (`--config`, `--debug`, `-v`, `-q`, `--help`), which the page
describes below the table.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from agent_host.cli.root import cli

PAGE = Path(__file__).resolve().parents[3] / "docs" / "operators" / "command-line.md"
SHARED = frozenset({"--config", "--debug", "--verbose", "--quiet", "--help"})
"""The options every command takes."""
ROW = re.compile(r"^\| `agent-host ([a-z]+)([^`]*)` \|", re.M)


def options_of(command: click.Command) -> Iterator[list[str]]:
    """The names of each option of `command` and of its subcommands (`["-o", "--output"]`), but the
    shared ones."""
    for param in command.params:
        if isinstance(param, click.Option) and not SHARED & set(param.opts):
            yield param.opts
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            yield from options_of(sub)


def rows() -> dict[str, str]:
    """Command name -> the text of every row starting with it."""
    found: dict[str, str] = {}
    for match in ROW.finditer(PAGE.read_text(encoding="utf-8")):
        found[match.group(1)] = found.get(match.group(1), "") + match.group(2)
    return found


COMMANDS = cli.commands if isinstance(cli, click.Group) else {}
"""The commands of `agent-host`, by name."""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_rows_of_each_command_name_each_of_its_options(name: str) -> None:
    text = rows().get(name)
    assert text is not None, f"no row for agent-host {name}"
    missing = [
        names
        for names in options_of(COMMANDS[name])
        if not any(re.search(rf"(?<![\w-]){spelling}\b", text) for spelling in names)
    ]
    assert not missing, f"agent-host {name}: {missing} missing from {PAGE.name}"


def test_every_command_has_a_row_and_new_names_its_languages() -> None:
    assert len(COMMANDS) > 10 and set(COMMANDS) <= set(rows())
    assert "[--lang python\\|js]" in rows()["new"]
