"""`agent-host call TOOLING TOOL [ARGS]`: call one tool from the host; its MCP result on stdout.

ARGS is a JSON object, `-` (read it from stdin), or KEY=VALUE pairs (each VALUE read as JSON when
it parses, a string otherwise), and nothing for `{}`. Exit code 1 when the tool reports an error
(its result is still printed), 2 when there is no result; with `--json` that failure is printed
as `{"error": {"code", "message", "data"}}` on stdout too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import click

from agent_host.cli import render
from agent_host.cli.options import State, approve_option, approver, common_options, complete_toolings, epilog
from agent_host.errors import ErrorCode, ExitCode, ToolingError, UsageError

HELP = """\b
Call TOOL of TOOLING and print the MCP result as JSON. ARGS is a JSON object, - to read it
from stdin, or KEY=VALUE pairs (VALUE as JSON when it parses, else a string):
  agent-host call demo add a=2 b=3
  agent-host call demo echo text='hello world'
  agent-host call demo add '{"a": 2, "b": 3}'
Exit code 1 when the tool reports an error."""


@click.command(
    "call", help=HELP, epilog=epilog(0, 1, 2, 130, 143), short_help="Call one tool from the host and print its result."
)
@click.argument("tooling", metavar="TOOLING", shell_complete=complete_toolings)
@click.argument("tool", metavar="TOOL")
@click.argument("arguments", nargs=-1, metavar="[ARGS]...")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    default=False,
    help='Always print JSON: the result, or {"error": {"code", "message", "data"}} when there is none.',
)
@approve_option
@common_options
@click.pass_obj
def command(state: State, tooling: str, tool: str, arguments: tuple[str, ...], as_json: bool, approve: str) -> int:
    from agent_host.app import inventory
    from agent_host.app.host import Host
    from agent_host.cli.signals import signals

    config = state.load_config()
    try:
        text = arguments_json(arguments, sys.stdin)
    except UsageError as exc:
        if as_json:  # a script reading stdout gets JSON for this failure too
            render.json_out(
                {"error": {"code": ErrorCode.INVALID_ARGUMENTS.value, "message": exc.message, "data": None}}
            )
        raise
    try:
        with (
            signals(raise_at_once=True) as stopper,
            stopper.started(
                lambda: Host(config, keep_logs=state.debug, approver=approver(approve), stop=stopper.token)
            ) as host,
        ):
            stopper.host = host
            report = inventory.call_tool(host, tooling, tool, text)
    except ToolingError as exc:
        if not as_json:
            raise
        render.json_out({"error": {"code": exc.code.value, "message": exc.message, "data": exc.data}})
        render.error(str(exc))
        from agent_host.cli.root import exit_code

        return exit_code(exc)
    render.json_out(report.result)
    if report.error is not None:
        render.report(f"tool {tool!r} reported an error: {report.error.message}")
        return ExitCode.GUEST_ERROR
    return ExitCode.SUCCESS


def arguments_json(items: Sequence[str], stdin: TextIO) -> str:
    """The JSON text of a call's arguments from ARGS (see the module docstring). One argument that
    is not a KEY=VALUE pair is passed on as is (the session checks it). Raises `UsageError` for
    a malformed pair or a key given twice."""
    if not items:
        return "{}"
    if list(items) == ["-"]:
        return stdin.read()
    if len(items) == 1 and not _is_pair(items[0]):
        return items[0]
    pairs: dict[str, Any] = {}
    for item in items:
        if not _is_pair(item):
            raise UsageError(
                f"argument {item!r}: expected KEY=VALUE",
                hint="give either one JSON object, - (read it from stdin), or KEY=VALUE pairs",
            )
        key, _, value = item.partition("=")
        if key in pairs:
            raise UsageError(f"argument {key!r} given twice")
        pairs[key] = parse_value(value)
    return json.dumps(pairs, ensure_ascii=False)


def parse_value(text: str) -> Any:
    """`text` as JSON when it is valid JSON (`5`, `true`, `[1, 2]`, `{"a": 1}`, `"5"`), else the
    string itself (`hello world`). NaN and Infinity stay strings."""

    def reject(constant: str) -> Any:
        raise ValueError(constant)

    try:
        return json.loads(text, parse_constant=reject)
    except ValueError:
        return text


def _is_pair(item: str) -> bool:
    key, separator, _ = item.partition("=")
    return bool(separator) and bool(key) and not item.lstrip().startswith(("{", "["))
