"""Python signatures of tools from their JSON Schemas (code mode's API text): readable for the usual
shapes, and bounded in time and size for hostile ones (upstream schemas are untrusted)."""

from __future__ import annotations

import json
from typing import Any

from agent_host._support.signatures import MAX_MEMBERS, identifier, signature


def test_required_parameters_come_first_then_defaults_and_the_answer_type() -> None:
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "default": 10}, "query": {"type": "string"}},
        "required": ["query"],
    }
    output = {"type": "object", "properties": {"hits": {"type": "array", "items": {"type": "string"}}}}
    assert signature("search", schema, output) == 'search(*, query: str, limit: int = 10) -> {"hits": list[str]}'


def test_unions_enums_and_open_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "when": {"type": ["string", "null"]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        },
    }
    assert signature("go", schema) == (
        "go(*, mode: Literal['fast', 'slow'] = None, when: str | None = None, either: int | bool = None) -> str"
    )
    assert signature("anything", {"type": "object"}) == "anything(**more: Any) -> str"


def test_names_that_are_not_identifiers_are_made_ones_or_left_to_more() -> None:
    assert [identifier(n) for n in ("my-server", "class", "3d", "ok")] == ["my_server", "class_", "_3d", "ok"]
    schema = {"type": "object", "properties": {"x-y": {"type": "string"}, "from": {"type": "string"}}}
    assert signature("tool.name", schema) == "tool_name(**more: Any) -> str"


def test_hostile_schemas_cost_time_and_text_bounded_by_their_size() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(50_000):  # deeper than Python's recursion limit: cut at MAX_DEPTH, never walked
        deep = {"type": "array", "items": deep}
    wide = {"anyOf": [{"type": "object", "properties": {f"p{i}": deep for i in range(1000)}}] * 1000}
    text = signature("t", {"type": "object", "properties": {"a": deep, "b": wide}, "required": ["a", "b"]})
    assert text.startswith("t(*, a: list[list[list[list[Any]]]], b: {") and len(text) < 2000
    huge_enum = {"enum": list(range(100_000))}
    shown = signature("t", {"type": "object", "properties": {"e": huge_enum}})
    assert shown.count(",") <= MAX_MEMBERS + 2 and ", ...]" in shown
    assert signature("t", json.loads('{"type": "object", "properties": 5}')) == "t(**more: Any) -> str"
