"""An example to copy: test your guest with the `agent_host` pytest fixture (installed with agent-host).

Each test runs a real guest (from its source, with the dev runner: a few ms per run) against the
toolings it names: an MCP server defined right here in the test (served in this process), a mock
tooling written as a dict, or any `[tooling.NAME]` table as a dict (here: a stdio server).
(README.md, section "Testing a guest".)

A guest's test is three lines; the result has `output`, `exit_code`, `error`, `stderr` and `audit`;
`dev=False` runs the production build; a cassette records a run once and replays it after.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from agent_host import AgentHost

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]
"""180 s, not the suite's 60: in a fresh cache the first test of a worker to need the example guests or the
dev runner builds and compiles them (30-40 s alone), and the others wait for that build (`cache.turn`); a fresh
run that was loaded took over 60 s."""

search = MCPServer("search")


@search.tool(name="search")
def find(query: str) -> dict[str, list[str]]:
    """Search the notes."""
    return {"hits": [f"{query}.md", f"{query}-2.md", "other.md", "more.md"]}


SCRIPTED = {
    "kind": "mock",
    "tools": [
        {
            "name": "search",
            "results": [{"structured": {"hits": ["cats.md", "kittens.md"]}}, {"error": "the index is being rebuilt"}],
        }
    ],
}

DEMO_SERVER = {"command": sys.executable, "args": ["-m", "agent_host.demo_server"]}


def test_the_finder_reports_the_best_hits_of_a_server_defined_in_the_test(agent_host: AgentHost) -> None:
    result = agent_host.run("guests/finder", input="cats", toolings={"search": search})
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output) == {"query": "cats", "count": 4, "best": ["cats.md", "cats-2.md", "other.md"]}
    assert [(a["tooling"], a["operation"], a["target"], a["outcome"]) for a in result.audit] == [
        ("search", "get", None, "ok"),
        ("search", "call-tool-blocking", "search", "ok"),
    ]


def test_runs_of_one_test_share_the_mock_so_its_script_goes_on(agent_host: AgentHost) -> None:
    first = agent_host.run("guests/finder", input="cats", toolings={"search": SCRIPTED})
    assert json.loads(first.output) == {"query": "cats", "count": 2, "best": ["cats.md", "kittens.md"]}
    second = agent_host.run("guests/finder", input="cats", toolings={"search": SCRIPTED})
    assert (second.status, second.exit_code, second.output) == ("error", 1, "")
    assert second.error is not None and second.error.code is None
    assert second.error.message == "search failed: tool-failed: the index is being rebuilt"
    assert [a["outcome"] for a in second.audit] == ["ok", "tool-failed"]


def test_the_demo_guest_against_a_stdio_server_table(agent_host: AgentHost) -> None:
    result = agent_host.run("guests/demo", input="one two\nthree", toolings={"demo": DEMO_SERVER})
    assert result.exit_code == 0, result.stderr
    assert "word_count: 3 words, 2 lines" in result.output and "add(words, lines) = 5" in result.output
    assert "[demo] info: tooling demo (mcp) offers 6 tools" in result.stderr


GUEST = """\
import wit_world
from wit_world.imports import tooling


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        print(f"asked for {input}")
        if input == "boom":
            raise ValueError("no boom today")
        tooling.get(input).name()
        return "unreachable"
"""


@pytest.fixture
def shaky(tmp_path: Path) -> Path:
    folder = tmp_path / "shaky"
    folder.mkdir()
    (folder / "app.py").write_text(GUEST)
    return folder


def test_an_uncaught_tooling_error_gives_its_code(agent_host: AgentHost, shaky: Path) -> None:
    granted = agent_host.run(shaky, input="search", toolings={"search": SCRIPTED})
    assert (granted.status, granted.output, granted.error) == ("ok", "unreachable", None)
    denied = agent_host.run(shaky, input="elsewhere", toolings={"search": SCRIPTED})
    assert denied.error is not None and (denied.status, denied.error.code) == ("error", "not-found")
    assert "raised at app.py:10" in denied.error.message
    assert "[shaky] asked for elsewhere" in denied.stderr
    assert [(a["tooling"], a["operation"], a["outcome"]) for a in denied.audit] == [("elsewhere", "get", "not-found")]


def test_a_guest_that_raises_fails_with_its_traceback_on_stderr(agent_host: AgentHost, shaky: Path) -> None:
    result = agent_host.run(shaky, input="boom")
    assert (result.status, result.exit_code, result.output) == ("error", 1, "")
    assert result.error is not None and "ValueError: no boom today" in result.error.message
    assert 'File "app.py", line 9, in run' in result.stderr


def test_dev_false_runs_the_production_build(agent_host: AgentHost) -> None:
    result = agent_host.run("guests/finder", input="dogs", toolings={"search": search}, dev=False)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output)["best"] == ["dogs.md", "dogs-2.md", "other.md"]


def test_a_cassette_is_recorded_once_then_replayed_without_asking_the_server(
    agent_host: AgentHost, tmp_path: Path
) -> None:
    """`cassette=PATH` with `record="once"` (the default) records
    when the file is missing and replays it otherwise; `"none"` only replays; `"all"` records."""
    from agent_host.errors import CassetteError

    cassette = tmp_path / "cassettes" / "finder.json"
    live = agent_host.run("guests/finder", input="cats", toolings={"search": search}, cassette=cassette)
    assert live.exit_code == 0, live.stderr
    assert json.loads(cassette.read_text())["agents"]["finder"]["input"] == "cats"
    # The scripted mock would answer something else: a replay never asks it.
    replayed = agent_host.run("guests/finder", input="cats", toolings={"search": SCRIPTED}, cassette=cassette)
    assert (replayed.status, replayed.output) == ("ok", live.output)
    other = agent_host.run("guests/finder", input="dogs", toolings={"search": search}, cassette=cassette)
    assert (other.status, other.exit_code) == ("diverged", 4)
    assert other.error is not None and "the input is 'dogs'; recorded 'cats'" in other.error.message
    with pytest.raises(CassetteError, match="no such cassette"):
        agent_host.run("guests/finder", input="cats", cassette=tmp_path / "missing.json", record="none")
    again = agent_host.run(
        "guests/finder", input="cats", toolings={"search": SCRIPTED}, cassette=cassette, record="all"
    )
    assert json.loads(again.output)["best"] == ["cats.md", "kittens.md"]  # recorded anew, from the mock
    assert "kittens.md" in cassette.read_text()
