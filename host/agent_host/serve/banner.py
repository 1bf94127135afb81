"""What `agent-host serve --http` prints on stderr once it listens: where and what it serves.

The first line is `agent-host: serving MCP on URL` (the URL its last word: scripts and tests read
it there); then what is offered (the agents, the proxied toolings, whose tools are `TOOLING.TOOL`)
and where the HTTP tool API beside MCP answers (`GET BASE/tools/list`, `POST BASE/tools/NAME`, its
description `BASE/openapi.json`).
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_host.serve.sessions import MCP_PATH


def banner(base: str, agents: Sequence[str], toolings: Sequence[str]) -> list[str]:
    """The lines (without their newlines) for a server at `base` (`http://127.0.0.1:8080`) offering
    `agents` and the tools of `toolings`."""
    offered = [f"agents {', '.join(agents)}" if agents else "no agent"]
    if toolings:
        offered.append(f"the tools of {', '.join(toolings)} (as TOOLING.TOOL)")
    return [
        f"agent-host: serving MCP on {base}{MCP_PATH}",
        f"agent-host: offering {' and '.join(offered)}",
        f"agent-host: HTTP tool API: GET {base}/tools/list, POST {base}/tools/NAME; OpenAPI: {base}/openapi.json",
    ]
