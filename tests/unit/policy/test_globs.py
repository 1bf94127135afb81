"""Globs of the policy never match a name or URI that a server would resolve elsewhere.

Dot segments (RFC 3986 section 5.2.4), also percent-encoded, match no glob of `tools`, `resources`,
`--allow` or a tooling's `capabilities`: `demo://readme/../note` does not pass `demo://read*`.
"""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ToolSpec
from agent_host.policy import capabilities, globs
from agent_host.policy.grants import Grants

ESCAPES = [
    "demo://readme/../note",
    "demo://readme/./note",
    "demo://readme/%2e%2e/note",
    "demo://readme/%2E%2e/note",
    "demo://readme/.%2E/note",
    "demo://readme/..%2Fnote",
    "demo://readme/%252e%252e/note",
    "demo://readme\\..\\note",
    "demo://readme/..",
    "demo://readme/%c0%ae%c0%ae/note",
]

FINE = ["demo://readme", "demo://readme/a..b", "demo://readme/...", "demo://readme/.hidden", "demo://readme%20x"]

GRANTS = Grants(
    agent="reader",
    toolings=frozenset({"demo"}),
    tools={"demo": ("read_*",)},
    resources={"demo": ("demo://read*",)},
    source="[agents.reader] in agent-host.toml",
)


@pytest.mark.parametrize("uri", ESCAPES)
def test_a_uri_with_a_dot_segment_matches_no_resource_glob_and_is_denied_saying_why(uri: str) -> None:
    assert not GRANTS.resource_allowed("demo", uri)
    with pytest.raises(ToolingError) as refused:
        GRANTS.check_resource("demo", uri)
    assert refused.value.code is ErrorCode.DENIED
    message = refused.value.message
    assert "may not use resource" in message and "resources.demo" in message
    assert "dot segment" in message or "not UTF-8" in message, message


@pytest.mark.parametrize("uri", FINE)
def test_a_uri_without_dot_segments_matches_as_before(uri: str) -> None:
    assert GRANTS.resource_allowed("demo", uri)
    GRANTS.check_resource("demo", uri)


def test_without_an_allow_list_nothing_is_refused() -> None:
    open_grants = Grants(agent="a", toolings=frozenset({"demo"}))
    assert open_grants.resource_allowed("demo", "demo://readme/../note")


def test_a_tool_name_with_a_dot_segment_matches_no_tool_glob() -> None:
    assert GRANTS.tool_allowed("demo", "read_file")
    assert not GRANTS.tool_allowed("demo", "read_/../write_file")
    with pytest.raises(ToolingError, match="dot segment"):
        GRANTS.check_tool("demo", "read_/%2e%2e/write_file")


def test_a_capability_glob_does_not_lend_its_capabilities_to_a_name_with_a_dot_segment() -> None:
    rules = {"read_*": ("read_only",)}
    assert capabilities.needed(ToolSpec("read_file", None, {}), rules) == {"read_only"}
    assert capabilities.needed(ToolSpec("read_/../delete", None, {}), rules) == {"external_side_effect"}


def test_hazards_are_named() -> None:
    assert globs.hazard("demo://readme/../x") == "a dot segment '..'"
    assert globs.hazard("demo://readme/%2e/x") == "a dot segment '.' once percent-decoded"
    assert globs.hazard("demo://%c0%ae") == "a percent-encoding that is not UTF-8"
    assert globs.hazard("demo://x/%" + "25" * 20 + "2e") == "percent-encodings nested more than 8 deep"
    assert globs.hazard("demo://readme") is None
