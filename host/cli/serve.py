"""`agent-host serve`: the configured agents as tools of an MCP server, over stdio.

Every offered agent's component is built and compiled before the server starts (progress on
stderr); stdout then carries only the MCP protocol. Each call runs a fresh guest with the agent's
grants and limits, as `agent-host run --agent NAME` does. The server ends when the client closes
stdin (exit 0) or at SIGINT/SIGTERM (130/143), its guests stopped and no process left.
"""

from __future__ import annotations

import click

from host import status_codes
from host.cli.options import EPILOG, State, common_options, complete_agents


@click.command(
    "serve", epilog=EPILOG, short_help="Offer the configured agents to MCP clients (over stdio).",
    help=(
        "Serve the configured agents as the tools of an MCP server on stdin/stdout: each agent (those of "
        "[serve] agents, or every [agents.NAME] with a component) is a tool taking {\"input\": string}, "
        "each call a fresh guest with the agent's grants and limits."
    ),
)  # fmt: skip
@click.option("--stdio", is_flag=True, required=True, help="Serve over stdin/stdout (the one transport so far).")
@click.option(
    "--agent", "agents", multiple=True, metavar="NAME", shell_complete=complete_agents,
    help="Offer this agent (repeatable; default: [serve] agents, else every agent with a component).",
)  # fmt: skip
@common_options
@click.pass_obj
def command(state: State, stdio: bool, agents: tuple[str, ...]) -> int:
    import anyio

    from host.app import Host
    from host.cli.signals import signals
    from host.serve.agents import AgentCalls, offered, prepare
    from host.serve.mcp_server import build_server, serve_stdio

    del stdio  # required: HTTP serving is not built yet
    config = state.load_config()
    chosen = offered(config, agents)
    with signals(raise_at_once=True) as stopper:
        with Host(config, keep_logs=state.debug, stop=stopper.token) as host:
            stopper.host = host
            offers = prepare(host, chosen, stopper.token)
            calls = AgentCalls(host, offers, config.serve.max_concurrent)
            anyio.run(serve_stdio, build_server(calls))
    return stopper.exit_code if stopper.exit_code is not None else status_codes.SUCCESS
