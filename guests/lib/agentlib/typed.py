"""Typed input: a JSON value checked and converted by a type annotation, and that type's JSON Schema.

Pure Python (it runs inside the component, where pydantic's compiled core cannot). The types it
knows: `str`, `int`, `float`, `bool`, `None`, `Any`/`object` (unchecked), `list[T]`, `tuple[T, ...]`,
`dict[str, T]`, `T | None` and other unions, `Literal[...]`, an `Enum` of str or int values, a
`TypedDict` (`total`, `Required`, `NotRequired`) and a dataclass (a field with a default is
optional). `parse(tp, value)` returns the value converted (a dataclass instance, an enum member;
an int accepted where a float is expected), or raises `InputError` naming the first wrong path
(`$.items[2].qty: expected an integer, got "x"`). `schema_of(tp)` is the JSON Schema of what
`parse` accepts; `TypeError` for a type it does not know.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any, Final

__all__ = ("InputError", "parse", "schema_of")

SHOWN: Final = 60
"""Characters of a wrong value quoted in an `InputError`."""

_NAMES: Final = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", type(None): "null"}
_SCHEMA_TYPES: Final = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


class InputError(ValueError):
    """The input does not match the annotation: `path` (JSONPath, `$` the whole input) and `problem`."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


_KINDS: Final = {dict: "an object", list: "an array"}


def _shown(value: object) -> str:
    if not isinstance(value, (str, int, float, bool, type(None))):
        return _KINDS.get(type(value), type(value).__name__)
    text = json.dumps(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _unwrapped(tp: Any) -> Any:
    """`tp` without `Annotated`, `Required` and `NotRequired`."""
    while typing.get_origin(tp) in (typing.Annotated, typing.Required, typing.NotRequired):
        tp = typing.get_args(tp)[0]
    return tp


def _fields(tp: type) -> tuple[dict[str, Any], set[str]]:
    """(field name -> annotation, the required names) of a TypedDict or a dataclass."""
    hints = typing.get_type_hints(tp, include_extras=True)
    if typing.is_typeddict(tp):  # from the hints: `__required_keys__` misses string annotations before 3.12
        total = getattr(tp, "__total__", True)
        required = {
            name
            for name, hint in hints.items()
            if typing.get_origin(hint) is typing.Required
            or (total and typing.get_origin(hint) is not typing.NotRequired)
        }
        return hints, required
    required = {
        field.name
        for field in dataclasses.fields(tp)
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    }
    return {field.name: hints[field.name] for field in dataclasses.fields(tp) if field.init}, required


def parse(tp: Any, value: Any, path: str = "$") -> Any:
    """`value` (parsed JSON) checked against `tp` and converted (see the module docstring)."""
    tp = _unwrapped(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in (Any, object):
        return value
    if tp in (None, type(None)):
        if value is not None:
            raise InputError(path, f"expected null, got {_shown(value)}")
        return None
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(path, f"expected a number, got {_shown(value)}")
        return float(value)
    if tp in (str, int, bool):
        if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
            raise InputError(path, f"expected {_NAMES[tp]}, got {_shown(value)}")
        return value
    if origin is typing.Literal:
        if not any(value == allowed and type(value) is type(allowed) for allowed in args):
            raise InputError(path, f"expected one of {', '.join(_shown(a) for a in args)}, got {_shown(value)}")
        return value
    if origin in (typing.Union, types.UnionType):
        failures: list[InputError] = []
        for member in args:
            try:
                return parse(member, value, path)
            except InputError as failed:
                failures.append(failed)
        deeper = [failed for failed in failures if failed.path != path]  # a member of the value's kind
        if len(deeper) == 1:
            raise deeper[0]
        raise InputError(path, f"expected {_described(tp)}, got {_shown(value)}")
    if origin in (list, tuple, typing.Sequence, typing.Iterable) or tp in (list, tuple):
        item = args[0] if args else Any
        if not isinstance(value, list):
            raise InputError(path, f"expected an array, got {_shown(value)}")
        items = [parse(item, element, f"{path}[{index}]") for index, element in enumerate(value)]
        return tuple(items) if origin is tuple or tp is tuple else items
    if origin in (dict, typing.Mapping) or tp is dict:
        item = args[1] if len(args) == 2 else Any
        if not isinstance(value, dict):
            raise InputError(path, f"expected an object, got {_shown(value)}")
        return {key: parse(item, element, f"{path}.{key}") for key, element in value.items()}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if member.value == value and type(member.value) is type(value):
                return member
        raise InputError(path, f"expected one of {', '.join(_shown(m.value) for m in tp)}, got {_shown(value)}")
    if isinstance(tp, type) and (typing.is_typeddict(tp) or dataclasses.is_dataclass(tp)):
        return _record(tp, value, path)
    raise TypeError(f"agentlib cannot read input as {tp!r}: use str, a TypedDict, a dataclass, or JSON types")


def _record(tp: type, value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise InputError(path, f"expected an object, got {_shown(value)}")
    hints, required = _fields(tp)
    for name in sorted(required):
        if name not in value:
            raise InputError(f"{path}.{name}", "is required")
    for name in value:
        if name not in hints:
            raise InputError(f"{path}.{name}", f"is not a field of {tp.__name__} (fields: {', '.join(hints)})")
    parsed = {name: parse(hints[name], element, f"{path}.{name}") for name, element in value.items()}
    return parsed if typing.is_typeddict(tp) else tp(**parsed)


def _described(tp: Any) -> str:
    schema = schema_of(tp)
    found = [branch.get("type", "a value") for branch in schema.get("anyOf", [schema])]
    return " or ".join(str(kind) for kind in found)


def schema_of(tp: Any, _open: tuple[Any, ...] = ()) -> dict[str, Any]:
    """The JSON Schema of the values `parse(tp, ...)` accepts. Raises `TypeError` for a type it
    does not know, and for a recursive one (a TypedDict naming itself)."""
    tp = _unwrapped(tp)
    if isinstance(tp, type) and tp in _open:
        raise TypeError(
            f"agentlib cannot read input as the recursive type {tp.__name__} (it contains itself): "
            "take the input as text (input: str) and parse it yourself"
        )
    inner = (*_open, tp) if isinstance(tp, type) else _open
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in (Any, object):
        return {}
    if tp is None:
        return {"type": "null"}
    if tp in _SCHEMA_TYPES:
        return {"type": _SCHEMA_TYPES[tp]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [schema_of(member, inner) for member in args]}
    if origin in (list, tuple, typing.Sequence, typing.Iterable) or tp in (list, tuple):
        return {"type": "array", "items": schema_of(args[0] if args else Any, inner)}
    if origin in (dict, typing.Mapping) or tp is dict:
        return {"type": "object", "additionalProperties": schema_of(args[1] if len(args) == 2 else Any, inner)}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [member.value for member in tp]}
    if isinstance(tp, type) and (typing.is_typeddict(tp) or dataclasses.is_dataclass(tp)):
        hints, required = _fields(tp)
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {name: schema_of(hint, inner) for name, hint in hints.items()},
            "required": [name for name in hints if name in required],
            "additionalProperties": False,
        }
        if tp.__doc__ and not tp.__doc__.startswith(tp.__name__ + "("):  # a dataclass's made-up docstring
            schema["description"] = tp.__doc__.strip()
        return schema
    raise TypeError(f"agentlib cannot read input as {tp!r}: use str, a TypedDict, a dataclass, or JSON types")
