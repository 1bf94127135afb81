"""Python signatures of MCP tools, from their JSON Schemas: what code mode shows a model and `help()`.

`signature("add", input_schema, output_schema)` is `add(*, a: int, b: int = 0) -> int`: keyword-only
parameters (required ones first), each annotated from its property's schema. Schemas come from
upstream servers, untrusted: nesting past `MAX_DEPTH` is `Any`, a union or an object past
`MAX_MEMBERS` members is cut, names that are not identifiers are left out of the parameters
(`**more` stands for them), so the text costs time and size linear in the schema's. `js_signature`
is the same for JavaScript (`add(args: { a: number, b?: number }) -> number`). Pure Python,
standard library only: the code runner bundles this file as it is (`components.dev_runner`).
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterable
from typing import Any, Final

MAX_DEPTH: Final = 4
"""Nesting of schemas rendered; deeper ones are `Any`."""

MAX_MEMBERS: Final = 12
"""Members of a union or fields of a typed dict rendered; the rest are cut (`...`)."""

MAX_DEFAULT: Final = 40
"""Characters of a default value's repr shown; longer ones are `...`."""

_SIMPLE: Final = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_NOT_IDENTIFIER: Final = re.compile(r"[^0-9a-zA-Z_]")
_NOT_JS: Final = re.compile(r"[^0-9a-zA-Z_$]")


def identifier(name: str) -> str:
    """`name` as a Python identifier: characters that cannot be in one become `_`, a leading digit
    or a keyword gets `_` (`my-server` is `my_server`, `class` is `class_`)."""
    text = _NOT_IDENTIFIER.sub("_", name) or "_"
    if text[0].isdigit():
        text = "_" + text
    return text + "_" if keyword.iskeyword(text) else text


RESERVED: Final = frozenset({"get", "gather", "search", "help", "ToolError", "NotGranted"})
"""Names of the `toolings` module's own: a tooling of such a name is reached by `toolings.get(NAME)`."""


def attributes(names: Iterable[str]) -> dict[str, str | None]:
    """Each tooling name's attribute of `toolings` (None: reached by `toolings.get(NAME)` alone). A
    name is its identifier (`my-server` is `my_server`) unless that is reserved, starts with `_`, or
    is shared: a name that is the identifier itself keeps it, the others sharing it get none, so no
    attribute ever reaches another tooling than the one it names."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(identifier(name), []).append(name)
    found: dict[str, str | None] = {}
    for attr, members in groups.items():
        usable = attr not in RESERVED and not attr.startswith("_")
        for name in members:
            found[name] = attr if usable and (name == attr or len(members) == 1) else None
    return found


def js_identifier(name: str) -> str:
    """`name` as the JavaScript runner reaches it as a property: characters other than letters,
    digits, `_` and `$` become `_`, a leading digit gets `_` (reserved words stay: properties may be)."""
    text = _NOT_JS.sub("_", name) or "_"
    return "_" + text if text[0].isdigit() else text


def annotation(schema: Any, depth: int = 0) -> str:
    """The Python type of values matching `schema` (`Any` when it says nothing clear)."""
    if not isinstance(schema, dict) or depth >= MAX_DEPTH:
        return "Any"
    if "enum" in schema and isinstance(schema["enum"], list):
        values = schema["enum"][:MAX_MEMBERS]
        shown = ", ".join(_short(value) for value in values)
        return f"Literal[{shown}{', ...' if len(schema['enum']) > MAX_MEMBERS else ''}]"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            members = [annotation(member, depth + 1) for member in schema[key][:MAX_MEMBERS]]
            return " | ".join(dict.fromkeys(members)) or "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(annotation({**schema, "type": k}, depth) for k in kind[:MAX_MEMBERS])) or "Any"
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        return f"list[{annotation(schema.get('items'), depth + 1)}]"
    if kind == "object":
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            fields = [
                f"{json.dumps(name)}: {annotation(value, depth + 1)}"
                for name, value in list(properties.items())[:MAX_MEMBERS]
            ]
            more = ", ..." if len(properties) > MAX_MEMBERS else ""
            return "{" + ", ".join(fields) + more + "}"
        return "dict[str, Any]"
    return "Any"


def parameters(schema: Any) -> list[str]:
    """The keyword-only parameters of a tool taking arguments matching `schema` (an object schema):
    required ones first, then the others with their default (`None` when the schema gives none);
    `**more` when a property's name is not an identifier or the schema allows more properties."""
    if not isinstance(schema, dict):
        return ["**arguments"]
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    needed = {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()
    first: list[str] = []
    later: list[str] = []
    hidden = False
    for index, (name, value) in enumerate(properties.items()):
        if index >= MAX_MEMBERS or not name.isidentifier() or keyword.iskeyword(name):
            hidden = True
            continue
        typed = f"{name}: {annotation(value)}"
        if name in needed:
            first.append(typed)
        else:
            default = value.get("default") if isinstance(value, dict) else None
            later.append(f"{typed} = {_short(default)}")
    extra = schema.get("additionalProperties")
    if hidden or (not properties and extra is not False) or isinstance(extra, dict):
        later.append("**more: Any")
    return first + later


def signature(name: str, input_schema: Any, output_schema: Any = None) -> str:
    """`NAME(*, a: int, b: int = 0) -> T` for tool `name` (see the module docstring); `T` is the type of
    its structured content when it has an output schema, else `str` (its text)."""
    params = parameters(input_schema)
    listed = ", ".join(params if not params or params[0].startswith("**") else ["*", *params])
    answer = annotation(output_schema) if isinstance(output_schema, dict) else "str"
    return f"{identifier(name)}({listed}) -> {answer}"


_TS_SIMPLE: Final = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}


def ts_type(schema: Any, depth: int = 0) -> str:
    """The TypeScript type of values matching `schema` (`any` when it says nothing clear); bounded as
    `annotation` is."""
    if not isinstance(schema, dict) or depth >= MAX_DEPTH:
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        shown = " | ".join(_short_json(value) for value in schema["enum"][:MAX_MEMBERS])
        return (shown + (" | ..." if len(schema["enum"]) > MAX_MEMBERS else "")) or "any"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(dict.fromkeys(ts_type(m, depth + 1) for m in schema[key][:MAX_MEMBERS])) or "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(ts_type({**schema, "type": k}, depth) for k in kind[:MAX_MEMBERS])) or "any"
    if kind in _TS_SIMPLE:
        return _TS_SIMPLE[kind]
    if kind == "array":
        return f"{ts_type(schema.get('items'), depth + 1)}[]"
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            return "object"
        required = schema.get("required")
        needed = set(required) if isinstance(required, list) else set()
        fields = [
            f"{name if name.isidentifier() else json.dumps(name)}{'' if name in needed else '?'}: "
            f"{ts_type(value, depth + 1)}"
            for name, value in list(properties.items())[:MAX_MEMBERS]
        ]
        return "{ " + ", ".join(fields) + (", ..." if len(properties) > MAX_MEMBERS else "") + " }"
    return "any"


def js_signature(name: str, input_schema: Any, output_schema: Any = None) -> str:
    """`NAME(args: { a: number, b?: number }) -> T` for tool `name`, called from JavaScript with one
    object of arguments; `T` is its structured content's type when it has an output schema, else
    `string` (its text). Bounded as `signature` is."""
    answer = ts_type(output_schema) if isinstance(output_schema, dict) else "string"
    return f"{js_identifier(name)}(args: {ts_type(input_schema)}) -> {answer}"


def _short_json(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= MAX_DEFAULT else "..."


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_DEFAULT else "..."
