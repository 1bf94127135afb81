"""`agent-host serve`: the configured agents, and `[serve] toolings` through `[serve] grants`, as an
MCP server over streamable HTTP or stdio (with the HTTP tool API beside MCP).

Every offered agent's component is built and compiled before the server starts (progress on
stderr; with `--stdio`, stdout then carries only the MCP protocol). Each call runs a fresh guest
with the agent's grants and limits, as `agent-host run --agent NAME` does; a proxied tool is called
as agent `serve`. Calls needing approval are decided by `--approve`. The server ends at
SIGINT/SIGTERM (130/143), or when a stdio client closes stdin (0, once every request it sent is
answered), its guests stopped and no process left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from agent_host.cli.options import (
    State,
    Where,
    approve_option,
    approver,
    common_options,
    complete_agents,
    epilog,
    executor_options,
)
from agent_host.errors import ExitCode

if TYPE_CHECKING:
    from agent_host.app.host import Host
    from agent_host.cli.signals import Stopper
    from agent_host.config import Config
    from agent_host.serve.agents import AgentRunner, Offer


@click.command(
    "serve",
    epilog=epilog(0, 2, 130, 143),
    short_help="Offer the configured agents (and toolings) to MCP clients.",
    help=(
        "Serve the configured agents as the tools of an MCP server, over streamable HTTP (default: "
        "[serve] http, 127.0.0.1:8080, endpoint /mcp, beside the HTTP tool API: GET /tools/list, "
        "POST /tools/NAME with the arguments as a JSON object) or stdin/stdout (until stdin closes): each agent "
        '(those of [serve] agents, or every [agents.NAME] with a component) is a tool taking {"input": string}, '
        "or the object its [agents.NAME] input_schema describes, given to the guest as JSON text; each call runs "
        "a fresh guest with the agent's grants and limits. The tools and resources of [serve] toolings are offered "
        "too (as TOOLING.TOOL), under the policy of [serve] grants. With --executor ray, the agents' calls run "
        "on a Ray cluster; the server stays here."
    ),
)
@click.option("--stdio", is_flag=True, default=False, help="Serve over stdin/stdout instead of HTTP.")
@click.option(
    "--http", "address", metavar="HOST:PORT", help="Listen here instead of [serve] http (port 0: a free one)."
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="NAME",
    shell_complete=complete_agents,
    help="Offer this agent (repeatable; default: [serve] agents, else every agent with a component).",
)
@approve_option
@executor_options
@common_options
@click.pass_obj
def command(
    state: State,
    stdio: bool,
    address: str | None,
    agents: tuple[str, ...],
    approve: str,
    executor: str | None,
    ray_address: str | None,
) -> int:
    from agent_host.app.host import Host
    from agent_host.cli.signals import signals
    from agent_host.config.models import bind_problem
    from agent_host.errors import UsageError

    config = state.load_config()
    if stdio and address is not None:
        raise UsageError("--stdio and --http exclude each other", hint="give one transport")
    if address is not None:
        try:
            problem = bind_problem(address, config.serve.tokens)
        except ValueError as exc:
            raise UsageError(f"--http: {exc}") from None
        if problem is not None:
            raise UsageError(
                f"--http {address}: {problem}",
                hint=f'set tokens = ["${{AGENT_HOST_TOKEN}}"] in [serve] of {config.describe_source()}',
            )
    where = Where.of(config, executor, ray_address, approve, dev=False)
    with signals() as stopper:  # preparing: a signal stops the builds, then `check` ends the command
        with Host(config, keep_logs=state.debug, approver=approver(approve), stop=stopper.token) as host:
            stopper.host = host
            if not where.ray:
                _serve(host, config, agents, stdio, address, stopper, None)
            else:
                from agent_host.cluster.connection import ray_cluster
                from agent_host.cluster.serving import RayAgents

                with ray_cluster(where.ray_address, stopper.token, verbose=state.debug) as cluster:

                    def on_ray(offers: Sequence[Offer]) -> AgentRunner:
                        return RayAgents(host, config, cluster, offers, approve=approve, stop=stopper.token)

                    _serve(host, config, agents, stdio, address, stopper, on_ray)
    return stopper.exit_code if stopper.exit_code is not None else ExitCode.SUCCESS


def _serve(
    host: Host,
    config: Config,
    agents: Sequence[str],
    stdio: bool,
    address: str | None,
    stopper: Stopper,
    runner: Callable[[Sequence[Offer]], AgentRunner] | None,
) -> None:
    """Build the catalog (its agents running where `runner` says; default: this process) and serve
    it until the client or a signal ends it; its agents' runner is closed however it ends."""
    from agent_host.serve.catalog import build_catalog
    from agent_host.serve.http import GracefulStop, serve_http
    from agent_host.serve.mcp_server import build_server, serve_stdio

    catalog = build_catalog(host, config, agents, stopper.token, runner)
    try:
        server = build_server(catalog)
        stopper.raise_at_once = True  # serving: a signal ends the loop (one before it: `check`)
        stopper.check()
        # On the bridge loop, beside the toolings' connections: a proxied call crosses no thread. A
        # signal ends the wait here; the server then ends its calls itself (`[serve] grace`), so the
        # handler must not stop the host's guests at once.
        stopper.host = None
        if stdio:
            host.bridge.run_foreground(serve_stdio, server, catalog)
        else:
            stop = GracefulStop()
            address = address or config.serve.http
            host.bridge.run_foreground(serve_http, server, catalog, config.serve, address, stop, stop=stop)
    finally:
        stopper.raise_at_once = False
        catalog.agents.runner.close()
