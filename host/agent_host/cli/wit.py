"""`agent-host wit`: the WIT contract guests are written against, or its folder."""

from __future__ import annotations

import click

from agent_host._support.paths import wit_dir
from agent_host.cli import render
from agent_host.cli.options import State, common_options, epilog
from agent_host.errors import ExitCode


@click.command(
    "wit",
    help="Print every file of the WIT package.",
    epilog=epilog(0, 2),
    short_help="Print the WIT contract guests are written against.",
)
@click.option(
    "--path", "folder_only", is_flag=True, default=False, help="Print the folder holding the WIT files instead."
)
@common_options
@click.pass_obj
def command(state: State, folder_only: bool) -> int:
    folder = wit_dir()
    if folder_only:
        render.line(str(folder))
        return ExitCode.SUCCESS
    for path in sorted(folder.glob("*.wit")):
        render.line(f"// ---- {path.name} ----")
        render.line(path.read_text(encoding="utf-8"))
    return ExitCode.SUCCESS
