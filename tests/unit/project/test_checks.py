"""The checks every call passes: JSON Schema validation and the capabilities a tool needs.

Arguments are checked against the tool's input schema, validators cached per schema, failures naming
the path and the rule; what a tool needs comes from the config, then its declaration, then its MCP
annotations, else external_side_effect.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ToolSpec
from agent_host.policy.capabilities import needed
from agent_host.policy.validation import ArgumentValidator

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"enum": ["fast", "slow"]},
    },
    "required": ["a"],
    "additionalProperties": False,
}


def refusal(arguments: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> str:
    with pytest.raises(ToolingError) as refused:
        ArgumentValidator().check("t", "tool", schema, arguments)
    assert refused.value.code is ErrorCode.INVALID_ARGUMENTS
    return refused.value.message


def test_valid_arguments_pass_and_the_same_arguments_broken_do_not() -> None:
    validator = ArgumentValidator()
    validator.check("t", "tool", SCHEMA, {"a": 1.5, "tags": ["x"], "mode": "fast"})  # raises nothing
    with pytest.raises(ToolingError, match="rule: type"):
        validator.check("t", "tool", SCHEMA, {"a": "1.5", "tags": ["x"], "mode": "fast"})


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "at $: 'a' is a required property (rule: required)"),
        ({"a": "1"}, "at $.a: '1' is not of type 'number' (rule: type)"),
        ({"a": 1, "tags": ["x", 2]}, "at $.tags[1]: 2 is not of type 'string' (rule: type)"),
        ({"a": 1, "mode": "warp"}, "at $.mode: 'warp' is not one of ['fast', 'slow'] (rule: enum)"),
        ({"a": 1, "extra": True}, "(rule: additionalProperties)"),
    ],
)
def test_failures_name_the_tool_the_path_and_the_rule(arguments: dict[str, Any], expected: str) -> None:
    message = refusal(arguments)
    assert message.startswith("the arguments of tool 'tool' of tooling 't' do not match its input schema: ")
    assert expected in message


def test_several_failures_are_reported_most_relevant_first_and_counted() -> None:
    message = refusal({"a": "x", "tags": [1, 2, 3], "mode": 4})
    assert message.count("(rule:") == 3 and message.endswith("(and 2 more)")


def test_validators_are_cached_per_schema_object() -> None:
    validator = ArgumentValidator()
    validator.check("t", "tool", SCHEMA, {"a": 1})
    first = validator._cache[("t", "tool", "input", id(SCHEMA))][1]
    validator.check("t", "tool", SCHEMA, {"a": 2})
    assert validator._cache[("t", "tool", "input", id(SCHEMA))][1] is first
    other = dict(SCHEMA, required=[])
    validator.check("t", "tool", other, {})  # a re-listed tool brings a new schema object: a new validator


def test_an_invalid_schema_is_not_enforced_and_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    validator, schema = ArgumentValidator(), {"type": "no-such-type"}
    with caplog.at_level(logging.WARNING):
        validator.check("t", "tool", schema, {"anything": 1})  # raises nothing
        validator.check("t", "tool", schema, {"anything": 2})
    warnings = [r.getMessage() for r in caplog.records if "invalid input schema" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].startswith("tooling 't': tool 'tool' has an invalid input schema (")
    assert warnings[0].endswith("; not enforced")


def spec(annotations: dict[str, Any] | None = None, capabilities: frozenset[str] | None = None) -> ToolSpec:
    return ToolSpec("read_file", None, {"type": "object"}, annotations=annotations, capabilities=capabilities)


@pytest.mark.parametrize(
    ("tool", "configured", "expected"),
    [
        (spec(), {}, {"external_side_effect"}),
        (spec({"readOnlyHint": True}), {}, {"read_only"}),
        (spec({"readOnlyHint": True, "openWorldHint": True}), {}, {"read_only", "network"}),
        (spec({"destructiveHint": True}), {}, {"workspace_write"}),
        (spec({"readOnlyHint": False, "title": "x"}), {}, {"external_side_effect"}),
        (spec(capabilities=frozenset({"process_execute"})), {}, {"process_execute"}),
        (spec({"readOnlyHint": True}), {"write_*": ("workspace_write",), "read_*": ("network",)}, {"network"}),
        (spec(capabilities=frozenset({"process_execute"})), {"*": ("read_only",)}, {"read_only"}),
    ],
)
def test_what_a_tool_needs_comes_from_config_then_declaration_then_annotations(
    tool: ToolSpec, configured: dict[str, tuple[str, ...]], expected: set[str]
) -> None:
    assert needed(tool, configured) == expected
