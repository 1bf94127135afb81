"""The command-line reference page holds every command and option of `agent-host`.

The page is generated from click, so an option added in code appears in the docs with no other edit.
The page's `::: mkdocs-click` block is rendered with the options the page gives it, and the click tree
is walked from the root group.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from mkdocs_click._extension import replace_command_docs

from agent_host.cli.root import cli

PAGE = Path(__file__).resolve().parents[3] / "docs" / "reference" / "cli.md"


def commands(command: click.Command, path: str = "agent-host") -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from commands(sub, f"{path} {name}")


@pytest.fixture(scope="module")
def rendered() -> str:
    block = PAGE.read_text(encoding="utf-8").split("::: mkdocs-click", 1)[1]
    options = dict(re.findall(r"^\s+:([a-z_]+):\s*(.*)$", block, re.M))
    assert options["module"] == "agent_host.cli.root" and options["command"] == "cli"
    return "\n".join(replace_command_docs(has_attr_list=True, **options))  # mkdocs.yml enables attr_list


def test_every_command_has_a_section_with_its_usage(rendered: str) -> None:
    found = list(commands(cli))
    assert len(found) > 15 and ("agent-host config schema" in dict(found))
    for path, _ in found:
        assert re.search(rf"^#+ {re.escape(path)} {{", rendered, re.M), path
        assert re.search(rf"^```text\n{re.escape(path)} ", rendered, re.M), path


def test_every_option_of_every_command_is_in_its_section(rendered: str) -> None:
    for path, command in commands(cli):
        start = re.search(rf"^#+ {re.escape(path)} {{", rendered, re.M)
        assert start is not None
        following = re.search(r"^#+ agent-host", rendered[start.end() :], re.M)
        section = rendered[start.end() : start.end() + following.start() if following else None]
        for parameter in command.params:
            if isinstance(parameter, click.Option) and not parameter.hidden:
                for flag in parameter.opts:
                    assert f"`{flag}`" in section, (path, flag)
                if parameter.help:
                    assert parameter.help.split("\n")[0][:40] in section, (path, parameter.name)
