"""The `agent-host` group, its global options, and `main`: from exceptions to exit codes.

`main(argv)` runs one command and returns its exit code (it never calls `sys.exit`; `--help` and
`--version` return 0). Errors become one line on stderr and a code from `errors.ExitCode`, by class:
`HostError` its own `exit_code`, `ToolingError` by `TOOLING_EXIT_CODES`, click usage errors 2,
`Interrupted` 128 + the signal; the traceback only with `--debug`. Other exceptions are bugs and
propagate. With `--json` (`wants_json`), a command that fails before printing its JSON document
prints `render.error_document` on stdout: one document, whatever the failure. Command modules are
imported here; each imports the heavy parts only when it runs.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Final, NoReturn

import click

from agent_host._support import scratch
from agent_host._version import __version__
from agent_host.cli import auth, bindings, build, cache, call, config, dev, new, run, serve, tools, wit
from agent_host.cli.options import EPILOG, State, common_options
from agent_host.errors import ErrorCode, ExitCode, HostError, Interrupted, ToolingError

logger = logging.getLogger("agent_host")

DESCRIPTION: Final = """\b
Run AI agents compiled to WebAssembly components. A guest reaches the world only through named
toolings (MCP servers over stdio or streamable HTTP) configured in agent-host.toml; without a
config file the embedded default offers tooling "demo", an MCP server bundled with the host."""

TOOLING_EXIT_CODES: Final = {ErrorCode.TOOL_FAILED: ExitCode.GUEST_ERROR}
"""Exit code of a `ToolingError` reaching the command line, by code; any other code: usage error."""

_LIBRARIES: Final = ("wasmtime", "componentize-py", "mcp")


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    versions = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in _LIBRARIES)
    click.echo(f"agent-host {__version__} ({versions}; Python {sys.version.split()[0]})")
    ctx.exit(ExitCode.SUCCESS)


@click.group(
    "agent-host",
    help=DESCRIPTION,
    epilog=EPILOG,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    default=False,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Print the versions of agent-host and of its engine, guest toolchain and MCP SDK.",
)
@common_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)
        ctx.exit(ExitCode.USAGE_ERROR)


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
    as_json = wants_json(args)
    from agent_host.cli import render

    render.expect_json(as_json)
    with _traces():
        return _main(args, as_json, state)


@contextlib.contextmanager
def _traces() -> Iterator[None]:
    """Export traces for the command when the `OTEL_*` variables ask for it (`_support.tracing`);
    flushed when it ends. Without such a variable nothing of OpenTelemetry is loaded here."""
    if not any(key.startswith("OTEL_") for key in os.environ):
        yield
        return
    from agent_host._support import tracing

    shutdown = tracing.configure()
    try:
        yield
    finally:
        shutdown()


def _main(args: list[str], as_json: bool, state: State) -> int:
    """`main` once the state is applied: the command's exit code, errors reported."""
    try:
        result = cli.main(args, prog_name="agent-host", standalone_mode=False, obj=state)
    except click.UsageError as exc:
        hint = f"see '{exc.ctx.command_path} --help'" if exc.ctx is not None else "see 'agent-host --help'"
        _report(
            f"{exc.format_message()}\n  hint: {hint}",
            json_as=("usage-error", exc.format_message()) if as_json else None,
        )
        return ExitCode.USAGE_ERROR
    except click.ClickException as exc:
        _report(exc.format_message(), json_as=("usage-error", exc.format_message()) if as_json else None)
        return exc.exit_code
    except click.Abort:
        click.echo("agent-host: cancelled by user", err=True)
        _json_error(as_json, Interrupted.reference, "cancelled by user")
        return ExitCode.INTERRUPTED
    except Interrupted as exc:
        _report(str(exc), kind="stopped", json_as=(exc.reference, exc.message) if as_json else None)
        return exc.exit_code
    except HostError as exc:
        _report(str(exc), json_as=(exc.reference, exc.message) if as_json else None)
        return exc.exit_code
    except ToolingError as exc:
        _report(str(exc), json_as=(exc.code.value, exc.message, exc.data) if as_json else None)
        return exit_code(exc)
    return result if isinstance(result, int) else ExitCode.SUCCESS


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON (`--json` before any `--`), read from the words
    themselves: a command line click cannot parse gets its JSON error document too."""
    words = list(args)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def entry() -> NoReturn:
    """The `agent-host` console script: `main()`, then a fast exit.

    By the time `main` returns, every command has closed what it opened (hosts are context
    managers: children stopped, temp folders removed); only the interpreter's own teardown is left
    (~1,000 modules, the wasmtime engine), ~0.1 s of every command. So the log is shut down,
    the process's temporary folder removed (what a guest that would not stop left there goes too:
    `agent_host._support.scratch`) and stdout/stderr flushed here, and the process ends with `os._exit`.
    """
    code = main()
    scratch.remove()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`agent-host ... | head`): nothing more to say
            pass
    os._exit(code)


def exit_code(exc: ToolingError) -> int:
    """The exit code of a `ToolingError` that ends a command (`TOOLING_EXIT_CODES`)."""
    return TOOLING_EXIT_CODES.get(exc.code, ExitCode.USAGE_ERROR)


def _report(
    message: str, *, kind: str = "error", json_as: tuple[str, str] | tuple[str, str, str | None] | None = None
) -> None:
    """`message` on stderr; with `json_as` (code, message[, data]) also the JSON error document on
    stdout, unless the command printed its own document."""
    from agent_host.cli import render

    logger.debug("details", exc_info=True)
    render.error(message, kind=kind)
    if json_as is not None:
        _json_error(True, *json_as)


def _json_error(as_json: bool, code: str, message: str, data: str | None = None) -> None:
    from agent_host.cli import render

    if as_json and render.json_missing():
        render.json_out(render.error_document(code, message, data))
