"""`agent-host build`: a guest folder into a component; its (cached) path on stdout."""

from __future__ import annotations

from pathlib import Path

import click

from agent_host.cli import render
from agent_host.cli.options import State, common_options, epilog, module_option
from agent_host.errors import ExitCode

HELP = """\b
Build GUEST, a guest folder, into a WebAssembly component with componentize-py, and compile it
for this machine, so that the first run starts at once. Both are cached by content; the
component's path is printed on stdout. The module defining WitWorld is app.py, else --module,
else the folder's only module. A build holds the folder, agentlib and the standard-library
modules its code imports as it loads, never the packages installed beside agent-host (copy them
into the folder); a module imported only at run time (importlib.import_module) is missing: import
it in app.py."""


@click.command("build", help=HELP, epilog=epilog(0, 2, 130, 143), short_help="Build a guest folder into a component.")
@click.argument("guest", metavar="GUEST", type=click.Path())
@module_option
@click.option("-o", "--output", metavar="PATH", type=click.Path(), help="Also copy the component to PATH.")
@click.option("--force", is_flag=True, default=False, help="Rebuild even when the cache is current.")
@click.option(
    "--no-compile", is_flag=True, default=False, help="Only build; the first run compiles the component (~10 s)."
)
@common_options
@click.pass_obj
def command(state: State, guest: str, module: str | None, output: str | None, force: bool, no_compile: bool) -> int:
    from agent_host._support.paths import cache_dir
    from agent_host.cli.signals import signals
    from agent_host.components.build import build_guest, copy_to

    with signals() as stopper:
        built = build_guest(Path(guest), module=module, force=force, stop=stopper.token)
        if not no_compile:
            from agent_host.runtime.engine import Runtime

            with Runtime(cache_dir()) as runtime:  # compiles into the cache unless it is there already
                runtime.load(built, stopper.token)
    render.line(str(copy_to(built, Path(output)) if output else built))
    return ExitCode.SUCCESS
