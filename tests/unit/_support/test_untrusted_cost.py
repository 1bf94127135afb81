"""Checking untrusted JSON costs memory linear in its size, with a small constant, whatever its shape.

Generated hostile shapes (deep chains of objects with long keys over a wide array, arrays breaking a
schema at every item, recursive `anyOf` schemas over deep values, long non-ASCII strings, a lone
surrogate or a refused number at the very end) go through the strict-JSON parser, the walk of a
value parsed elsewhere, and the schema check. The memory each allocates at its peak (`tracemalloc`)
is compared with what merely parsing the text with the `json` module allocates, the floor of any
check in Python, and with the text's size. The checks' error messages stay short, naming one path.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_host._support import strict_json
from agent_host.errors import ToolingError
from agent_host.policy.validation import ArgumentValidator

PARSE_FACTOR: Final = 2.0
"""Peak memory of a check at most this many times that of `json.loads` of the same text ..."""

SIZE_FACTOR: Final = 64
"""... and at most this many bytes per byte of text ..."""

SLACK: Final = 512 * 1024
"""... plus this much (interpreter noise, jsonschema's own structures)."""

MAX_MESSAGE: Final = 2_000
"""Characters of an error message about any input."""

SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "strings": {"type": "object", "properties": {"v": {"type": "array", "items": {"type": "string"}}}},
    "tree": {
        "$defs": {"node": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/node"}}]}},
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/node"}},
    },
    "one-of": {
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "array", "items": {"type": "boolean"}}, {"type": "array", "maxItems": 1}]}
        },
    },
    "closed": {"type": "object", "additionalProperties": False, "properties": {"w": {"type": "integer"}}},
}


@dataclass(frozen=True)
class Shape:
    """A hostile JSON text, built from a few generated numbers (so that it can be large)."""

    depth: int
    key_chars: int
    width: int
    leaf: str
    tail: str

    def value_text(self) -> str:
        leaves = {"zero": "0", "string": '"\\u00e9t\\u00e9"', "empty": "{}", "array": "[[]]", "text": '"x"'}
        tails = {"none": [], "surrogate": ['"\\ud800"'], "number": ["1e999"], "digits": ["9" * 1001]}
        inner = "[" + ",".join([leaves[self.leaf]] * self.width + tails[self.tail]) + "]"
        for level in range(self.depth):
            key = (f"k{level}" + "é" * self.key_chars)[: self.key_chars + 2]
            inner = f'{{"{key}":{inner}}}'
        return inner

    def text(self) -> str:
        return f'{{"v":{self.value_text()}}}'


shapes = st.builds(
    Shape,
    depth=st.integers(0, strict_json.MAX_DEPTH - 4),
    key_chars=st.integers(0, 200),
    width=st.integers(0, 40_000),
    leaf=st.sampled_from(["zero", "string", "empty", "array", "text"]),
    tail=st.sampled_from(["none", "surrogate", "number", "digits"]),
)


def peak(work: Callable[[], object]) -> int:
    """Bytes `work` allocated at its peak (what it returned is freed before)."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def floor(text: str) -> int:
    return peak(lambda: json.loads(text, parse_constant=lambda name: None))


def bounded(used: int, text: str) -> bool:
    return used <= max(PARSE_FACTOR * floor(text), SIZE_FACTOR * len(text)) + SLACK


def quietly(work: Callable[[], object]) -> str:
    """`work()`, and the message of the error it raised ("" if none)."""
    try:
        work()
    except (strict_json.JsonTextError, ToolingError) as exc:
        return str(exc)
    return ""


SETTINGS: Final = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(shapes)
def test_the_strict_parser_costs_a_small_multiple_of_parsing(shape: Shape) -> None:
    text = shape.text()
    used = peak(lambda: quietly(lambda: strict_json.parse(text)))
    assert bounded(used, text), (used, floor(text), len(text), shape)
    assert len(quietly(lambda: strict_json.parse(text))) < MAX_MESSAGE


@SETTINGS
@given(shapes.filter(lambda shape: shape.tail == "none"))
def test_walking_a_value_parsed_elsewhere_holds_memory_bounded_by_its_depth(shape: Shape) -> None:
    """The walk (`check`, as for arguments the MCP SDK parsed) allocates nothing in proportion to
    the value's size: one iterator per level and the text of one path."""
    value = json.loads(shape.text())
    value["v2"] = "\ud800"  # reported last: the whole value is walked first
    used = peak(lambda: quietly(lambda: strict_json.check(value)))
    assert used <= SLACK, (used, shape)
    assert "$.v2" in quietly(lambda: strict_json.check(value))


@SETTINGS
@given(shapes.filter(lambda shape: shape.tail == "none"), st.sampled_from(sorted(SCHEMAS)))
def test_a_schema_check_costs_a_small_multiple_of_parsing(shape: Shape, schema: str) -> None:
    text = shape.text()
    arguments = json.loads(text)
    validator = ArgumentValidator()
    quietly(lambda: validator.check("t", "warm", SCHEMAS[schema], {}))  # jsonschema imported, the schema built
    used = peak(lambda: quietly(lambda: validator.check("t", "warm", SCHEMAS[schema], arguments)))
    assert bounded(used, text), (used, floor(text), len(text), shape, schema)
    assert len(quietly(lambda: validator.check("t", "warm", SCHEMAS[schema], arguments))) < MAX_MESSAGE


@pytest.mark.parametrize("width", [100_000])
def test_an_array_breaking_its_schema_at_every_item_is_reported_from_a_few_violations(width: int) -> None:
    arguments = {"v": [0] * width}
    validator = ArgumentValidator()
    with pytest.raises(ToolingError) as refused:
        validator.check("t", "tool", SCHEMAS["strings"], arguments)
    message = refused.value.message
    assert "at $.v[" in message and "0 is not of type 'string'" in message and message.endswith("(and more)")
    assert len(message) < MAX_MESSAGE


def test_a_value_at_fault_is_quoted_cut_however_large() -> None:
    arguments = {"w": "x" * 1_000_000, "extra": {"k" * 1_000_000: 1}}
    validator = ArgumentValidator()
    with pytest.raises(ToolingError) as refused:
        validator.check("t", "tool", SCHEMAS["closed"], arguments)
    assert len(refused.value.message) < MAX_MESSAGE
    assert "xxxx..." in refused.value.message
