"""Grants and limits resolve from the configuration and decide with messages that say how to grant.

Deny by default; `--allow`; the embedded default grants its demo tooling; allow-lists of globs; refusals
name the agent, the thing refused and the key that would grant it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_host.config import default_config, parse_config
from agent_host.errors import ErrorCode, ToolingError, UsageError
from agent_host.policy.grants import AgentPolicy

CONFIG = """
[host]
cpu_time = 7
max_result_bytes = "2KiB"

[tooling.files]
command = "files-server"

[tooling.web]
command = "web-server"

[agents.reader]
toolings = ["files"]
tools = { files = ["read_*", "list"] }
resources = { files = ["file:///data/*"] }
memory = "64MiB"
timeout = 9
"""


def config() -> object:
    return parse_config(CONFIG, Path("/etc/ah/agent-host.toml"), {})


def denied(call: object) -> str:
    assert callable(call)
    with pytest.raises(ToolingError) as refused:
        call()
    assert refused.value.code is ErrorCode.DENIED
    return refused.value.message


def test_an_agent_table_grants_its_toolings_and_allow_lists() -> None:
    cfg = parse_config(CONFIG, Path("/etc/ah/agent-host.toml"), {})
    policy = AgentPolicy.resolve(cfg, "reader", cfg.agents["reader"])
    grants = policy.grants
    grants.check_tooling("files")
    assert grants.tool_allowed("files", "read_file") and grants.tool_allowed("files", "list")
    assert not grants.tool_allowed("files", "write_file") and not grants.tool_allowed("files", "listing")
    assert grants.resource_allowed("files", "file:///data/a.txt")
    assert not grants.resource_allowed("files", "file:///etc/passwd")
    message = denied(lambda: grants.check_tooling("web"))
    assert "agent 'reader' is not granted tooling 'web'" in message
    assert 'toolings = ["web"] in /etc/ah/agent-host.toml [agents.reader]' in message
    message = denied(lambda: grants.check_tool("files", "write_file"))
    assert 'tools.files = ["read_*", "list"] in /etc/ah/agent-host.toml [agents.reader]' in message
    assert "may not use resource 'file:///etc/passwd'" in denied(
        lambda: grants.check_resource("files", "file:///etc/passwd")
    )


def test_a_bare_run_with_a_config_file_is_denied_everything_until_allowed() -> None:
    cfg = parse_config(CONFIG, Path("/etc/ah/agent-host.toml"), {})
    bare = AgentPolicy.resolve(cfg, "guest")
    assert "grant it with --allow files" in denied(lambda: bare.grants.check_tooling("files"))
    allowed = AgentPolicy.resolve(cfg, "guest", allow=["web"])
    allowed.grants.check_tooling("web")
    denied(lambda: allowed.grants.check_tooling("files"))
    everything = AgentPolicy.resolve(cfg, "guest", allow=["*"])
    assert everything.grants.toolings == {"files", "web"}
    with pytest.raises(UsageError, match="--allow mail: no configured tooling matches"):
        AgentPolicy.resolve(cfg, "guest", allow=["mail"])


def test_the_embedded_default_grants_its_demo_tooling() -> None:
    policy = AgentPolicy.resolve(default_config(), "guest")
    policy.grants.check_tooling("demo")
    assert policy.grants.tool_allowed("demo", "anything")


def test_limits_come_from_the_agent_then_the_host_table_then_the_defaults() -> None:
    cfg = parse_config(CONFIG, Path("/etc/ah/agent-host.toml"), {})
    limits = AgentPolicy.resolve(cfg, "reader", cfg.agents["reader"]).limits
    assert limits.memory.value == 64 * 2**20 and "[agents.reader]" in limits.memory.key
    assert limits.wall_time.value == 9 and limits.cpu_time.value == 7
    assert limits.cpu_time.key == "cpu_time in /etc/ah/agent-host.toml [host]"
    assert limits.max_argument_bytes.value == 2**20  # the built-in default
    with pytest.raises(ToolingError) as refused:
        limits.check_result_size(4096, "tool 'read_file'")
    assert refused.value.code is ErrorCode.LIMIT_EXCEEDED
    assert "is 4096 bytes, more than the limit of 2048 (max_result_bytes in" in refused.value.message
    limits.check_result_size(2048, "tool 'read_file'")
