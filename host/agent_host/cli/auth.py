"""`agent-host auth login|status|logout TOOLING`: the OAuth tokens of HTTP toolings with `auth`.

`login` runs the flow once: it prints the authorization URL on stderr, the person opens it, approves,
and pastes the address the browser was sent to (headless machines included: nothing listens on the
redirect URI). With client credentials it just gets a token. `status` shows what is stored (never a
token); `logout` forgets it. Ctrl-C stops a login. The tokens live in `agent_host.toolings.mcp.tokens`' folder.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final

import click

from agent_host.cli import render
from agent_host.cli.options import State, common_options, complete_toolings, epilog
from agent_host.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from agent_host.config import Config, HttpToolingConfig
COLUMNS: Final = (
    render.Column("TOOLING"),
    render.Column("TYPE"),
    render.Column("LOGGED IN"),
    render.Column("SCOPES"),
    render.Column("EXPIRES"),
    render.Column("REFRESHABLE"),
)


@click.group(
    "auth", epilog=epilog(0, 2, 130, 143), short_help="Log in to, show or forget the OAuth tokens of HTTP toolings."
)
@common_options
def group() -> None:
    """Log in to the OAuth-protected HTTP toolings (`auth = {...}`), show or forget their tokens."""


def _tooling(config: Config, name: str) -> HttpToolingConfig:
    from agent_host.config import HttpToolingConfig

    tooling = config.toolings.get(name)
    with_auth = sorted(n for n, t in config.toolings.items() if isinstance(t, HttpToolingConfig) and t.auth)
    if not isinstance(tooling, HttpToolingConfig) or tooling.auth is None:
        what = "is not defined" if tooling is None else "has no `auth` (only HTTP toolings have OAuth)"
        raise UsageError(f"tooling {name!r} {what}", hint=f"toolings with auth: {', '.join(with_auth) or 'none'}")
    return tooling


async def _ask(url: str) -> str:
    """Show `url`; the address the person pastes back (Ctrl-C stops the wait)."""
    import anyio

    click.echo("Open this address in a browser and approve agent-host:", err=True)
    click.echo(f"  {url}", err=True)
    click.echo("Then paste the address the browser was sent to (it may show an error page) and press Enter:", err=True)
    answer = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    if not answer.strip():
        raise UsageError("no address was pasted", hint="run the login again and paste the redirected address")
    return str(answer)


@group.command(
    "login", epilog=epilog(0, 2, 130, 143), help="Log in to TOOLING once (prints a URL; paste back where it led)."
)
@click.argument("tooling", metavar="TOOLING", shell_complete=complete_toolings)
@common_options
@click.pass_obj
def login(state: State, tooling: str) -> int:
    import anyio

    from agent_host.cli.signals import signals
    from agent_host.toolings.mcp import auth as mcp_auth

    config = _tooling(state.load_config(), tooling)
    with signals(raise_at_once=True):
        summary = anyio.run(mcp_auth.login, config, _ask)
    render.note(f"{tooling}: logged in{_scopes(summary)}; the tokens are stored and refreshed by the host")
    return ExitCode.SUCCESS


@group.command(
    "status", epilog=epilog(0, 2, 130, 143), help="Show the stored login of TOOLING (default: every tooling with auth)."
)
@click.argument("tooling", required=False, metavar="[TOOLING]", shell_complete=complete_toolings)
@click.option("--json", "as_json", is_flag=True, default=False, help="Print JSON instead of a table.")
@common_options
@click.pass_obj
def status(state: State, tooling: str | None, as_json: bool) -> int:
    from agent_host.config import HttpToolingConfig
    from agent_host.toolings.mcp.tokens import TokenFile

    config = state.load_config()
    if tooling:
        names = [_tooling(config, tooling).name]
    else:
        names = sorted(n for n, t in config.toolings.items() if isinstance(t, HttpToolingConfig) and t.auth)
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        entry = _tooling(config, name)
        assert entry.auth is not None
        found[name] = {"type": entry.auth.type, **TokenFile(name, entry.url).load().summary()}
    if as_json:
        render.json_out(found)
    elif not found:
        render.note(f"no tooling has `auth` in {config.describe_source()}: nothing to log in to")
    else:
        rows = [
            (name, s["type"], "yes" if s["logged_in"] else "no", s["scopes"] or "", _expiry(s), _yes(s["refreshable"]))
            for name, s in found.items()
        ]
        render.table(COLUMNS, rows)
    return ExitCode.SUCCESS


@group.command("logout", epilog=epilog(0, 2, 130, 143), help="Forget the tokens of TOOLING (a running host notices).")
@click.argument("tooling", metavar="TOOLING", shell_complete=complete_toolings)
@common_options
@click.pass_obj
def logout(state: State, tooling: str) -> int:
    from agent_host.toolings.mcp.tokens import TokenFile

    config = _tooling(state.load_config(), tooling)
    removed = TokenFile(config.name, config.url).remove()
    render.note(f"{tooling}: logged out" if removed else f"{tooling}: was not logged in")
    return ExitCode.SUCCESS


def _scopes(summary: dict[str, Any]) -> str:
    return f" (scopes: {summary['scopes']})" if summary.get("scopes") else ""


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _expiry(summary: dict[str, Any]) -> str:
    import time

    expires = summary["expires_at"]
    if expires is None:
        return ""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(expires))
    return f"{when} (expired)" if summary["expired"] else when
