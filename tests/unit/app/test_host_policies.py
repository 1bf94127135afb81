"""`Host.session(agent)` and `Host.start(..., agent=...)` resolve the agent's policy the same way when
none is given: the agent's `[agents.NAME]` table when the config has one, else `[host] allow`, else
nothing (deny by default); an explicit `allow=` or `policy=` still decides.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host import ErrorCode, Host, ToolingError, UsageError, parse_config

CONFIG = """
[tooling.search]
kind = "mock"

[[tooling.search.tools]]
name = "find"
results = [{ text = "found" }]
repeat_last = true

[tooling.mail]
kind = "mock"

[agents.reader]
toolings = ["search"]
"""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with Host(parse_config(CONFIG, tmp_path / "agent-host.toml", {})) as host:
        yield host


def denied(host: Host, agent: str, tooling: str, **how: object) -> str:
    """The message of the `denied` error that `get(tooling)` meets in a session of `agent`."""
    session = host.session(agent, **how)  # type: ignore[arg-type]
    try:
        with pytest.raises(ToolingError) as caught:
            session.get(tooling)
    finally:
        session.close()
    assert caught.value.code is ErrorCode.DENIED, caught.value
    return caught.value.message


def granted(host: Host, agent: str, tooling: str, **how: object) -> None:
    session = host.session(agent, **how)  # type: ignore[arg-type]
    try:
        session.get(tooling)
    finally:
        session.close()


def test_a_session_of_an_agent_without_a_table_is_denied_by_default(host: Host, tmp_path: Path) -> None:
    message = denied(host, "stranger", "search")
    assert "agent 'stranger' is not granted tooling 'search'" in message
    assert f"no [agents.NAME] table, no --allow and no [host] allow in {tmp_path / 'agent-host.toml'}" in message


def test_a_session_of_an_agent_with_a_table_gets_what_its_table_grants(host: Host) -> None:
    granted(host, "reader", "search")
    assert "[agents.reader]" in denied(host, "reader", "mail")


def test_an_explicit_allow_or_policy_still_decides(host: Host) -> None:
    granted(host, "stranger", "search", allow=["search"])
    granted(host, "stranger", "mail", allow=["*"])
    granted(host, "reader", "mail", allow=["mail"])  # more than the table, like --allow
    granted(host, "stranger", "mail", policy=host.policy("stranger", allow=["mail"]))
    with pytest.raises(UsageError, match="pass either policy or allow, not both"):
        host.session("stranger", host.policy("stranger"), allow=["mail"])
    with pytest.raises(UsageError, match="--allow nothing: no configured tooling matches"):
        host.session("stranger", allow=["nothing"])


def test_start_and_session_resolve_the_same_policy_when_none_is_given(host: Host) -> None:
    """`Host.agent_policy` is what both use (`start` needs a component; its use is in
    tests/component/guests/test_grants_and_limits.py)."""
    assert host.agent_policy("reader").grants.toolings == frozenset({"search"})
    assert host.agent_policy("reader") == host.policy("reader", host.config.agents["reader"])
    assert host.agent_policy("stranger").grants.toolings == frozenset()
    assert host.agent_policy("stranger", allow=["*"]).grants.toolings == frozenset({"search", "mail"})
