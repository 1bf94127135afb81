"""`agent-host tools`: the tools (with their argument names) and resources of the toolings.

A tooling that fails is reported with its error on stderr and, with `--json`, as
`{"error": {"code", "message"}}` in place of its lists; the exit code is then 2. A single named
tooling that fails without `--json` is an error of the command. Tools changed or new since their
tooling's pins were recorded are marked (`[changed]`, `[new]`; `"pin"` in JSON) and named on
stderr; `--pin` records the listed tools as the pins of TOOLING (default: every `pin_tools` tooling).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import click

from agent_host.cli import render
from agent_host.cli.options import State, common_options, complete_toolings, epilog
from agent_host.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from agent_host.app.inventory import ToolingReport
    from agent_host.config import Config
    from agent_host.policy.pins import Repin
TOOL_COLUMNS: Final = (render.Column("TOOL"), render.Column("ARGUMENTS"), render.Column("DESCRIPTION"))
RESOURCE_COLUMNS: Final = (render.Column("RESOURCE"), render.Column("MIME TYPE"), render.Column("NAME"))


@click.command(
    "tools",
    epilog=epilog(0, 2, 130, 143),
    short_help="List the tools (and resources) of the configured toolings.",
    help="Connect to TOOLING (default: every configured tooling) and list its tools and resources.",
)
@click.argument("tooling", required=False, metavar="[TOOLING]", shell_complete=complete_toolings)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    default=False,
    help='Print JSON instead of a table; a command that fails before listing prints {"error": {"code", "message", '
    '"data"}}.',
)
@click.option(
    "--pin",
    is_flag=True,
    default=False,
    help="Record the tools as listed now as the reviewed ones in agent-host.lock (of TOOLING, or of every "
    "tooling with pin_tools = true).",
)
@common_options
@click.pass_obj
def command(state: State, tooling: str | None, as_json: bool, pin: bool) -> int:
    from agent_host.app import inventory
    from agent_host.app.host import Host
    from agent_host.cli.signals import signals

    config = state.load_config()
    names = [tooling] if tooling else sorted(config.toolings)
    if pin:
        names = _pinning(config, tooling)
    with (
        signals(raise_at_once=True) as stopper,
        stopper.started(lambda: Host(config, keep_logs=state.debug, stop=stopper.token)) as host,
    ):
        stopper.host = host
        reports = inventory.list_toolings(host, names, pin=pin)
        lock = host.pins.path
    worst = ExitCode.SUCCESS
    for report in reports:
        if report.error is not None:
            if tooling and not as_json:
                raise report.error
            render.report(f"{report.name}: {report.error}")
            worst = ExitCode.USAGE_ERROR
        elif report.repin is not None:
            render.report(_repinned(report.repin, lock))
        elif unpinned := _unpinned(report):
            render.report(
                f"{report.name}: changed or new since pinned in {lock}: {', '.join(unpinned)}; guests are denied "
                f"them: review them, then run `agent-host tools --pin {report.name}`"
            )
    if as_json:
        render.json_out({report.name: report_json(report) for report in reports})
    else:
        for index, report in enumerate(r for r in reports if r.error is None):
            if index:
                render.line("")
            _show(report)
    return worst


def _pinning(config: Config, tooling: str | None) -> list[str]:
    """The toolings `--pin` records: `tooling`, or every one with `pin_tools`; `UsageError` when it
    (or each) does not pin its tools."""
    where = config.describe_source()
    if tooling is not None:
        settings = config.toolings.get(tooling)
        if settings is not None and not settings.pin_tools:
            hint = f"add pin_tools = true to [tooling.{tooling}] in {where}"
            raise UsageError(f"tooling {tooling!r} does not pin its tools", hint=hint)
        return [tooling]
    names = sorted(name for name, settings in config.toolings.items() if settings.pin_tools)
    if not names:
        hint = "add pin_tools = true to a [tooling.NAME] table of a config file (`agent-host config init` writes one)"
        raise UsageError(f"no tooling of {where} pins its tools", hint=hint)
    return names


def _repinned(repin: Repin, lock: Path | None) -> str:
    """The line telling what `--pin` recorded."""
    changes = [
        f"{what}: {', '.join(names)}"
        for what, names in (("changed", repin.changed), ("new", repin.new), ("removed", repin.removed))
        if names
    ]
    return f"{repin.tooling}: pinned {repin.tools} tools in {lock} ({'; '.join(changes) or 'no change'})"


def _unpinned(report: ToolingReport) -> list[str]:
    """`name (changed)` for each tool of `report` that is not the pinned one."""
    pins = report.pins or {}
    return [f"{name} ({status})" for name, status in pins.items() if status != "pinned"]


def _mark(report: ToolingReport, name: str) -> str:
    """`[changed] ` or `[new] ` before the description of a tool that is not the pinned one."""
    status = (report.pins or {}).get(name, "pinned")
    return "" if status == "pinned" else f"[{status}] "


def report_json(report: ToolingReport) -> dict[str, Any]:
    """A tooling's entry in `tools --json`; each tool of a pinning tooling has `"pin"`: its status."""
    if report.error is not None:
        return {"error": {"code": report.error.code.value, "message": report.error.message}}
    tools = []
    for t in report.tools:
        tool = {"name": t.name, "description": t.description, "inputSchema": t.input_schema, "builtin": t.builtin}
        if report.pins is not None:
            tool["pin"] = str(report.pins.get(t.name, "pinned"))
        tools.append(tool)
    return {
        "tools": tools,
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
        [
            t.name,
            argument_names(t.input_schema),
            _mark(report, t.name) + ("[builtin] " if t.builtin else "") + render.one_line(t.description),
        ]
        for t in report.tools
    ]
    render.table(TOOL_COLUMNS, rows, title=title)
    if report.resources:
        render.table(RESOURCE_COLUMNS, [[r.uri, r.mime_type or "", r.name] for r in report.resources])
