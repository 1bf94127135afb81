"""What `agent-host serve --http` prints once it listens: its MCP URL, what it offers, its tool API.

The first line stays `agent-host: serving MCP on URL` (scripts read the URL as its last word); the
next say which agents and proxied toolings are offered and where the HTTP tool API answers.
"""

from __future__ import annotations

from agent_host.serve.banner import banner

BASE = "http://127.0.0.1:8080"


def test_the_url_line_comes_first_unchanged_then_the_offer_and_the_tool_api() -> None:
    assert banner(BASE, ["scout", "finder"], []) == [
        "agent-host: serving MCP on http://127.0.0.1:8080/mcp",
        "agent-host: offering agents scout, finder",
        "agent-host: HTTP tool API: GET http://127.0.0.1:8080/tools/list, POST http://127.0.0.1:8080/tools/NAME; "
        "OpenAPI: http://127.0.0.1:8080/openapi.json",
    ]


def test_proxied_toolings_are_named_with_how_their_tools_are_called() -> None:
    assert banner(BASE, ["scout"], ["files", "mock"])[1] == (
        "agent-host: offering agents scout and the tools of files, mock (as TOOLING.TOOL)"
    )
    assert banner(BASE, [], ["files"])[1] == "agent-host: offering no agent and the tools of files (as TOOLING.TOOL)"
    assert banner(BASE, [], [])[1] == "agent-host: offering no agent"
