"""The options every command takes and what they set: `State`, the click context's `obj`.

`--config FILE`, `--debug`, `-v/--verbose` and `-q/--quiet` are accepted before and after the
command name (`agent-host --config F tools` = `agent-host tools --config F`); a value given later
wins, flags add up. Each applies at once as it is parsed (logging, progress display), so a command
body finds everything set. Also: shell completion of tooling and agent names from the config.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click
from click.shell_completion import CompletionItem

from agent_host.cli import logs
from agent_host.errors import UsageError

if TYPE_CHECKING:
    from agent_host.config import Config
    from agent_host.policy.approval import Approver
F = TypeVar("F", bound=Callable[..., Any])

EXIT_CODES: Final = {
    0: "ok",
    1: "the guest (or a called tool) returned an error",
    2: "usage or configuration error",
    3: "trap or limit",
    4: "a replayed run diverged from its cassette",
    130: "stopped by SIGINT (Ctrl-C)",
    143: "stopped by SIGTERM",
}
"""What each exit code of the command line means (`errors.ExitCode`), as help texts say it."""

CONFIG_LOOKUP: Final = "--config FILE, else $AGENT_HOST_CONFIG, else ./agent-host.toml, else the embedded default"
"""Where the configuration is read from, in order."""


def epilog(*codes: int) -> str:
    """A command's help epilog: the exit codes it can end with (`codes`; default: all) and where the
    configuration is read from."""
    listed = ", ".join(f"{code} {EXIT_CODES[code]}" for code in codes or tuple(EXIT_CODES))
    lines = textwrap.wrap(f"exit codes: {listed}.", width=100, subsequent_indent="  ")
    return "\b\n" + "\n".join([*lines, f"config file: {CONFIG_LOOKUP}."])


EPILOG: Final = epilog()
"""The epilog of the `agent-host` group: every exit code."""


@dataclass
class State:
    """What the shared options set."""

    config: str | None = None
    debug: bool = False
    verbose: int = 0
    quiet: bool = False

    def apply(self) -> None:
        """Configure logging and the progress display for the options seen so far."""
        logs.setup(debug=self.debug, verbose=self.verbose, quiet=self.quiet)
        from agent_host.cli import render

        render.setup(quiet=self.quiet)

    def load_config(self) -> Config:
        """The configuration in use (see EPILOG); raises `ConfigError`."""
        from agent_host.config import find_config_file, load_config

        return load_config(find_config_file(self.config))


def state(ctx: click.Context) -> State:
    """The `State` of the command line `ctx` belongs to (made when missing, as in completion)."""
    return ctx.find_root().ensure_object(State)


def _set(field: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        current = state(ctx)
        if field == "config":
            if value is not None:
                current.config = value
        elif field == "verbose":
            current.verbose += value
        elif value:
            setattr(current, field, True)
        if not ctx.resilient_parsing:
            current.apply()

    return callback


def common_options(function: F) -> F:
    """Add the shared options to a command or group."""
    options = (
        click.option(
            "--config",
            metavar="FILE",
            expose_value=False,
            callback=_set("config"),
            type=click.Path(),
            help=f"Configuration file (default: {CONFIG_LOOKUP.removeprefix('--config FILE, else ')}).",
        ),
        click.option(
            "--debug",
            is_flag=True,
            default=False,
            expose_value=False,
            callback=_set("debug"),
            help="Debug logs, tracebacks, keep the servers' logs.",
        ),
        click.option(
            "-v",
            "--verbose",
            count=True,
            expose_value=False,
            callback=_set("verbose"),
            help="More logs: -v the host's debug logs, -vv the libraries' too.",
        ),
        click.option(
            "-q",
            "--quiet",
            is_flag=True,
            default=False,
            expose_value=False,
            callback=_set("quiet"),
            help="Only results, errors and the guest's own output: no progress, no notes.",
        ),
    )
    for option in reversed(options):
        function = option(function)
    return function


def _configured(ctx: click.Context, pick: Callable[[Config], list[str]], incomplete: str) -> list[CompletionItem]:
    try:
        names = pick(state(ctx).load_config())
    except Exception:  # boundary: completion must never fail the shell
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def complete_toolings(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Shell completion: the configured toolings' names."""
    return _configured(ctx, lambda config: sorted(config.toolings), incomplete)


def complete_agents(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Shell completion: the configured agents' names."""
    return _configured(ctx, lambda config: sorted(config.agents), incomplete)


input_option: Final = click.option(
    "--input", "input_spec", metavar="TEXT|@FILE|-", help="Input for run(): text, @file, or - for stdin."
)
"""`--input`, as `run` and `dev` take it (read by `cli.run.read_input`)."""

allow_option: Final = click.option(
    "--allow",
    multiple=True,
    metavar="TOOLING",
    shell_complete=complete_toolings,
    help="Grant a tooling (repeatable; globs: '*' = all).",
)
"""`--allow`, as `run` and `dev` take it."""

module_option: Final = click.option(
    "--module",
    metavar="NAME",
    help="The module defining WitWorld, by its import name (app for app.py; default: app, else the folder's only "
    "module); for a JavaScript guest, the module exporting run (main for main.js; default: app.js).",
)
"""`--module`, as `run` and `dev` take it."""

approve_option: Final = click.option(
    "--approve",
    type=click.Choice(["deny", "ask", "all"]),
    default="deny",
    show_default=True,
    help="Calls needing approval (require_approval): deny, ask on the terminal, approve all.",
)
"""`--approve`, as `run` and `serve` take it (made an `Approver` by `approver`)."""


def approver(choice: str) -> Approver:
    """The approver of an `--approve` choice."""
    from agent_host.policy.approval import ApproveAll, DenyAll, TerminalApprover

    if choice == "ask":
        return TerminalApprover()
    return ApproveAll() if choice == "all" else DenyAll()


def executor_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--executor` and `--ray-address` (`run`, `serve`): where agents run (see `Where`)."""
    f = click.option(
        "--ray-address",
        metavar="ADDR",
        help="With --executor ray: `auto` (the cluster `ray start` made here) or HOST:PORT; absent: [host] "
        "ray_address, else $RAY_ADDRESS, else a local Ray.",
    )(f)
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default=None,
        help="Where agents run: threads of this process (local) or Ray actors (ray). Default: [host] executor, "
        "else local.",
    )(f)


@dataclass(frozen=True)
class Where:
    """Where agents run: `ray_address` None and `ray` False for this process."""

    ray: bool
    ray_address: str | None = None

    @classmethod
    def of(cls, config: Config, executor: str | None, address: str | None, approve: str, dev: bool) -> Where:
        """From the options, else `[host]`, else (the address) `RAY_ADDRESS`; `UsageError` for what
        Ray cannot do."""
        from agent_host.config.types import ray_address_problem

        chosen = executor if executor is not None else config.host.executor
        if chosen != "ray":
            if address is not None:
                raise UsageError('--ray-address goes with --executor ray (or [host] executor = "ray")')
            return cls(False)
        if dev:
            raise UsageError("--dev runs guests from their source on this machine", hint="drop --executor ray")
        if approve == "ask":
            raise UsageError(
                "--approve ask: agents on Ray run where nobody can answer a prompt",
                hint="use --approve deny (the default) or --approve all, or run with --executor local",
            )
        given = "--ray-address"
        if address is None and config.host.ray_address is None and os.environ.get("RAY_ADDRESS"):
            given, address = "RAY_ADDRESS", os.environ["RAY_ADDRESS"]
        found = ray_address_problem(address) if address is not None else None
        if found is not None:  # ([host] ray_address was checked with the file)
            raise UsageError(f"{given}: {found[0]}", hint=found[1])
        return cls(True, address if address is not None else config.host.ray_address)
