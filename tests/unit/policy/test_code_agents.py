"""A code agent's runner is told its language, granted toolings and stdout bound by the host, after
the agent's own `env`: a table cannot change them."""

from __future__ import annotations

import json
from pathlib import Path

from agent_host.config import parse_config
from agent_host.policy.code_agents import CODE_VARIABLE, STDOUT_VARIABLE, TOOLINGS_VARIABLE
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
env = { AGENT_HOST_CODE_TOOLINGS = '["secret"]', AGENT_HOST_CODE = "javascript", MINE = "kept" }
[agents.plain]
toolings = ["a"]
"""


def test_the_runners_variables_come_from_the_policy_after_the_agents_env(tmp_path: Path) -> None:
    config = parse_config(CONFIG, tmp_path / "agent-host.toml")
    env = AgentPolicy.resolve(config, "code", config.agents["code"]).env
    assert env == {CODE_VARIABLE: "python", TOOLINGS_VARIABLE: json.dumps(["a", "b"]), STDOUT_VARIABLE: "4096",
                   "MINE": "kept"}  # fmt: skip
    assert AgentPolicy.resolve(config, "plain", config.agents["plain"]).env == {}
