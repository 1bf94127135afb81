"""A code agent's runner is told its mode by a variable the host sets after the agent's own `env`,
and gets its snippet in an envelope with the granted toolings: a table cannot change either."""

from __future__ import annotations

import json
from pathlib import Path

from agent_host.config import parse_config
from agent_host.policy.code_agents import ANSWER_MAX, CODE_VARIABLE
from agent_host.policy.grants import AgentPolicy

CONFIG = """
[host]
guest_output_max = 4096
[tooling.a]
kind = "mock"
[tooling.b]
kind = "mock"
[agents.code]
code = "python"
toolings = ["b", "a"]
env = { AGENT_HOST_CODE = "javascript", MINE = "kept" }
[agents.plain]
toolings = ["a"]
"""


def test_the_runner_is_told_its_mode_and_gets_the_snippet_in_an_envelope(tmp_path: Path) -> None:
    config = parse_config(CONFIG, tmp_path / "agent-host.toml")
    policy = AgentPolicy.resolve(config, "code", config.agents["code"])
    assert policy.env == {CODE_VARIABLE: "python", "MINE": "kept"}
    assert json.loads(policy.guest_input("1 + 1")) == {
        "code": "1 + 1", "toolings": {"a": "a", "b": "b"}, "stdout": 4096, "answer": ANSWER_MAX
    }  # fmt: skip
    plain = AgentPolicy.resolve(config, "plain", config.agents["plain"])
    assert plain.env == {} and plain.guest_input("as it is") == "as it is"
