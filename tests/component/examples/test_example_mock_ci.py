"""An example to copy: test your guest in CI against a mock tooling, without any server.

Everything here is what a user's own CI would do: write an agent-host.toml with a `kind = "mock"`
tooling that scripts the answers your guest will get, run the guest with `agent-host run`, and
check what it printed. (docs/embedding/testing.md, section "A mock tooling".)
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import cli_process

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]
"""180 s, not the suite's 60: in a fresh cache the first test of a worker to need the example guests or the
dev runner builds and compiles them (30-40 s alone), and the others wait for that build (`cache.turn`); a fresh
run that was loaded took over 60 s."""

REPO = Path(__file__).resolve().parents[3]

CONFIG = f"""
[tooling.search]
kind = "mock"

[[tooling.search.tools]]
name = "search"
input_schema = {{ type = "object", properties = {{ query = {{ type = "string" }} }}, required = ["query"] }}
results = [
  {{ structured = {{ hits = ["cats.md", "kittens.md", "lions.md", "tigers.md"] }} }},
  {{ error = "the index is being rebuilt" }},
]

[agents.finder]
component = "{REPO / "guests" / "finder"}"
toolings = ["search"]
input = "cats"
"""


def agent_host(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_process.run(*args)


def test_the_finder_reports_the_best_hits(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    done = agent_host("run", "--agent", "finder", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"query": "cats", "count": 4, "best": ["cats.md", "kittens.md", "lions.md"]}
    # Each `agent-host run` is a new host, so the script starts again from its first result.
    again = agent_host("run", "--agent", "finder", "--config", str(config), "--input", "dogs")
    assert json.loads(again.stdout)["query"] == "dogs" and json.loads(again.stdout)["count"] == 4


def test_a_failing_search_makes_the_finder_report_an_error(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        CONFIG.replace(
            "results = [\n  { structured", 'results = [\n  { error = "the index is being rebuilt" },\n  { structured'
        )
    )
    done = agent_host("run", "--agent", "finder", "--config", str(config))
    assert done.returncode == 1  # the guest returned err
    assert "search failed: tool-failed: the index is being rebuilt" in done.stderr
