"""`agent-host tools`: the tools (with their argument names) and resources of the toolings.

A tooling that fails is reported with its error on stderr and, with `--json`, as
`{"error": {"code", "message"}}` in place of its lists; the exit code is then 2. A single named
tooling that fails without `--json` is an error of the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import click

from host import status_codes
from host.cli import render
from host.cli.options import EPILOG, State, common_options, complete_toolings

if TYPE_CHECKING:
    from host.inventory import ToolingReport

TOOL_COLUMNS: Final = (render.Column("TOOL"), render.Column("ARGUMENTS"), render.Column("DESCRIPTION"))
RESOURCE_COLUMNS: Final = (render.Column("RESOURCE"), render.Column("MIME TYPE"), render.Column("NAME"))


@click.command(
    "tools", epilog=EPILOG, short_help="List the tools (and resources) of the configured toolings.",
    help="Connect to TOOLING (default: every configured tooling) and list its tools and resources.",
)  # fmt: skip
@click.argument("tooling", required=False, metavar="[TOOLING]", shell_complete=complete_toolings)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@common_options
@click.pass_obj
def command(state: State, tooling: str | None, as_json: bool) -> int:
    from host import inventory
    from host.app import Host
    from host.cli.signals import signals

    config = state.load_config()
    names = [tooling] if tooling else sorted(config.toolings)
    with signals(raise_at_once=True) as stopper, Host(config, keep_logs=state.debug, stop=stopper.token) as host:
        stopper.host = host
        reports = inventory.list_toolings(host, names)
    worst = status_codes.SUCCESS
    for report in reports:
        if report.error is not None:
            if tooling and not as_json:
                raise report.error
            render.report(f"{report.name}: {report.error}")
            worst = status_codes.USAGE_ERROR
    if as_json:
        render.json_out({report.name: report_json(report) for report in reports})
    else:
        for index, report in enumerate(r for r in reports if r.error is None):
            if index:
                render.line("")
            _show(report)
    return worst


def report_json(report: ToolingReport) -> dict[str, Any]:
    """A tooling's entry in `tools --json`."""
    if report.error is not None:
        return {"error": {"code": report.error.code.value, "message": report.error.message}}
    return {
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema, "builtin": t.builtin}
            for t in report.tools
        ],
        "resources": [{"uri": r.uri, "name": r.name, "mimeType": r.mime_type} for r in report.resources],
    }


def argument_names(schema: dict[str, Any]) -> str:
    """`a, b, [note]`: the properties of an input schema, optional ones in brackets."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return ", ".join(name if name in needed else f"[{name}]" for name in properties)


def _show(report: ToolingReport) -> None:
    title = f"{report.name} ({len(report.tools)} tools, {len(report.resources)} resources)"
    rows: Sequence[Sequence[str]] = [
        [t.name, argument_names(t.input_schema), ("[builtin] " if t.builtin else "") + render.one_line(t.description)]
        for t in report.tools
    ]
    render.table(TOOL_COLUMNS, rows, title=title)
    if report.resources:
        render.table(RESOURCE_COLUMNS, [[r.uri, r.mime_type or "", r.name] for r in report.resources])
