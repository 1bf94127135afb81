"""`agent-host cache [list|prune|clean]`: what the cache folder holds, and bounding it by hand.

Without an action (or `list`): one row per guest (builds, compiled artifacts, size, last use,
whether a running host uses some of it), `npm/` and temp files; `--json` for scripts. `prune`
applies the limits (`AGENT_HOST_CACHE_KEEP`, `AGENT_HOST_CACHE_MAX`, or `--keep`/`--max`); `clean`
removes everything. Neither removes what a running host uses. The summary goes to stdout.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

import click

from agent_host.cli import render
from agent_host.cli.options import State, common_options, epilog
from agent_host.errors import ExitCode

if TYPE_CHECKING:
    from agent_host.cache import Entry, Limits, Listing, Removal
COLUMNS: Final = (
    render.Column("GUEST"),
    render.Column("BUILDS", right=True),
    render.Column("COMPILED", right=True),
    render.Column("SIZE", right=True),
    render.Column("LAST USED"),
    render.Column("IN USE"),
    render.Column("SOURCE"),
)


@click.group(
    "cache",
    invoke_without_command=True,
    epilog=epilog(0, 2),
    short_help="List, prune or clean the build cache.",
    help="List what the cache holds (builds per guest, compiled components, npm/) with sizes; "
    "prune it to its limits, or clean it. Nothing a running host uses is removed.",
)
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the listing as JSON.")
@common_options
@click.pass_context
def group(ctx: click.Context, as_json: bool) -> int | None:
    if ctx.invoked_subcommand is None:
        return _list(as_json)
    return None


@group.command("list", epilog=epilog(0, 2), help="List what the cache holds (the default action).")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the listing as JSON.")
@common_options
@click.pass_obj
def list_(state: State, as_json: bool) -> int:
    return _list(as_json)


@group.command("prune", epilog=epilog(0, 2), help="Keep the newest builds per guest and the total under the size cap.")
@click.option("--keep", type=click.IntRange(min=1), metavar="N", help="Builds kept per guest (default: 3).")
@click.option("--max", "max_size", metavar="SIZE", help="Size cap: 2GiB, 500MB, bytes or none (default: 2GiB).")
@common_options
@click.pass_obj
def prune(state: State, keep: int | None, max_size: str | None) -> int:
    from agent_host import cache
    from agent_host._support.paths import cache_dir
    from agent_host.cache.bounds import parse_bytes

    limits = cache.Limits.from_env()
    limits = cache.Limits(
        keep if keep is not None else limits.keep,
        parse_bytes(max_size, "--max") if max_size is not None else limits.max_bytes,
    )
    _summary(cache.prune(cache_dir(), limits))
    return ExitCode.SUCCESS


@group.command("clean", epilog=epilog(0, 2), help="Remove everything (builds, compiled components, npm/) not in use.")
@common_options
@click.pass_obj
def clean(state: State) -> int:
    from agent_host import cache
    from agent_host._support.paths import cache_dir

    _summary(cache.clean(cache_dir()))
    return ExitCode.SUCCESS


def _list(as_json: bool) -> int:
    from agent_host import cache
    from agent_host._support.paths import cache_dir
    from agent_host.cache.contents import UNKNOWN

    listing = cache.scan(cache_dir())
    limits = cache.Limits.from_env()
    busy = {entry for entry in listing.entries if cache.in_use(entry)}
    if as_json:
        render.json_out(listing_json(listing, limits, busy))
        return ExitCode.SUCCESS
    cap = render.size(limits.max_bytes) if limits.max_bytes is not None else "no cap"
    render.line(
        f"cache {listing.root}: {render.size(listing.size)} in builds and compiled components "
        f"(limits: {limits.keep} per guest, {cap}); npm/ {render.size(listing.npm)}"
    )
    groups: dict[str, list[Entry]] = {}  # artifacts of unknown source on one row
    for entry in sorted(listing.entries, key=lambda e: (e.name, e.group)):
        groups.setdefault(entry.name if entry.name == UNKNOWN else entry.group, []).append(entry)
    rows = [
        [
            members[0].name,
            str(sum(e.builds for e in members)),
            str(sum(e.compiled for e in members)),
            render.size(sum(e.size for e in members)),
            time.strftime("%Y-%m-%d %H:%M", time.localtime(max(e.used for e in members))),
            "yes" if any(e in busy for e in members) else "",
            group if group != members[0].name else "",
        ]
        for group, members in groups.items()
    ]
    render.table(COLUMNS, rows)
    if listing.temp:
        render.line(f"{len(listing.temp)} temp file(s) of builds or compiles in progress (or that died)")
    return ExitCode.SUCCESS


def listing_json(listing: Listing, limits: Limits, busy: set[Entry]) -> dict[str, Any]:
    """The listing as `cache --json` prints it."""
    return {
        "path": str(listing.root),
        "size": listing.size,
        "limits": {"keep": limits.keep, "max_bytes": limits.max_bytes},
        "entries": [
            {
                "guest": entry.name,
                "group": entry.group,
                "builds": entry.builds,
                "compiled": entry.compiled,
                "size": entry.size,
                "used": entry.used,
                "in_use": entry in busy,
                "files": [str(path) for path in entry.files],
            }
            for entry in listing.entries
        ],
        "npm": listing.npm,
        "temp": [str(path) for path in listing.temp],
    }


def _summary(removal: Removal) -> None:
    builds = sum(entry.builds for entry in removal.removed)
    compiled = sum(entry.compiled for entry in removal.removed)
    text = f"removed {builds} build(s) and {compiled} compiled component(s), {render.size(removal.freed)}"
    if removal.other:
        text += f"; also {', '.join(removal.other)}"
    if removal.kept:
        text += f"; kept {len(removal.kept)} in use by a running host (or written in the last minutes)"
    render.line(text)
