"""The `agent-host` group, its global options, and `main`: from exceptions to exit codes.

`main(argv)` runs one command and returns its exit code (it never calls `sys.exit`; `--help` and
`--version` return 0). Errors become one line on stderr and a code from `status_codes`, by class:
`HostError` its own `exit_code`, `ToolingError` by `TOOLING_EXIT_CODES`, click usage errors 2,
`Interrupted` 128 + the signal; the traceback only with `--debug`. Other exceptions are bugs and
propagate. Command modules are imported here; each imports the heavy parts only when it runs.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys
from collections.abc import Sequence
from typing import Final, NoReturn

import click

from host import __version__, status_codes
from host.cli import auth, bindings, build, cache, call, config, dev, new, run, serve, tools, wit
from host.cli.options import EPILOG, State, common_options
from host.errors import ErrorCode, HostError, ToolingError
from host.stopping import Interrupted

logger = logging.getLogger("host")

DESCRIPTION: Final = """\b
Run AI agents compiled to WebAssembly components. A guest reaches the world only through named
toolings (MCP servers over stdio or streamable HTTP) configured in agent-host.toml; without a
config file the embedded default offers tooling "demo", an MCP server bundled with the host."""

TOOLING_EXIT_CODES: Final = {ErrorCode.TOOL_FAILED: status_codes.GUEST_ERROR}
"""Exit code of a `ToolingError` reaching the command line, by code; any other code: usage error."""

_LIBRARIES: Final = ("wasmtime", "componentize-py", "mcp")


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    versions = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in _LIBRARIES)
    click.echo(f"agent-host {__version__} ({versions}; Python {sys.version.split()[0]})")
    ctx.exit(status_codes.SUCCESS)


@click.group(
    "agent-host", help=DESCRIPTION, epilog=EPILOG, invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)  # fmt: skip
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
    help="Print the versions of agent-host and of its engine, guest toolchain and MCP SDK.",
)  # fmt: skip
@common_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(status_codes.USAGE_ERROR)


for _command in (
    run.command,
    dev.command,
    build.command,
    new.command,
    bindings.command,
    tools.command,
    call.command,
    serve.command,
    config.group,
    wit.command,
):
    cli.add_command(_command)
cli.add_command(cache.group)
cli.add_command(auth.group)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command in `argv` (default: `sys.argv[1:]`) and return its exit code."""
    state = State()
    state.apply()
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        result = cli.main(args, prog_name="agent-host", standalone_mode=False, obj=state)
    except click.UsageError as exc:
        hint = f"see '{exc.ctx.command_path} --help'" if exc.ctx is not None else "see 'agent-host --help'"
        _report(f"{exc.format_message()}\n  hint: {hint}")
        return status_codes.USAGE_ERROR
    except click.ClickException as exc:
        _report(exc.format_message())
        return exc.exit_code
    except click.Abort:
        click.echo("agent-host: cancelled by user", err=True)
        return status_codes.INTERRUPTED
    except Interrupted as exc:
        _report(str(exc), kind="stopped")
        return exc.exit_code
    except HostError as exc:
        _report(str(exc))
        return exc.exit_code
    except ToolingError as exc:
        _report(str(exc))
        return exit_code(exc)
    return result if isinstance(result, int) else status_codes.SUCCESS


def entry() -> NoReturn:
    """The `agent-host` console script: `main()`, then a fast exit.

    By the time `main` returns, every command has closed what it opened (hosts are context
    managers: children stopped, temp folders removed); only the interpreter's own teardown is left
    (~1,000 modules, the wasmtime engine), ~0.1 s of every command. So the log is shut down and
    stdout/stderr flushed here, and the process ends with `os._exit`.
    """
    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`agent-host ... | head`): nothing more to say
            pass
    os._exit(code)


def exit_code(exc: ToolingError) -> int:
    """The exit code of a `ToolingError` that ends a command (`TOOLING_EXIT_CODES`)."""
    return TOOLING_EXIT_CODES.get(exc.code, status_codes.USAGE_ERROR)


def _report(message: str, *, kind: str = "error") -> None:
    from host.cli import render

    logger.debug("details", exc_info=True)
    render.error(message, kind=kind)
