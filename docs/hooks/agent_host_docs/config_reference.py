"""The configuration reference: every table and key of `agent-host.toml`, from the models' JSON Schema.

The schema is `agent_host.config.schema.json_schema()`, the one `agent-host config schema` prints,
generated from the pydantic models that validate the file: each key has its type, its default and
its docstring. The walk starts at the file's top-level tables and follows every reference to a
nested table (a `[tooling.NAME]` kind, an `auth` table, `[[tooling.NAME.tools]]`, `dirs`, ...);
each model gets one section, at the first path that reaches it, and later uses link to it. A schema
construct the walk does not know raises `ValueError` (the docs build fails rather than hide a key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import TypeAdapter

from agent_host.config.types import Size

Schema = Mapping[str, Any]

REF_PREFIX: Final = "#/definitions/"
SIZE_SCHEMA: Final = TypeAdapter(Size).json_schema()
"""The schema of a size key (bytes or "256MiB"), shown as `size` rather than as its pattern."""
SIZES_ANCHOR: Final = "config-sizes"
"""The anchor of the note, above the tables, that says once what a size is."""
SIZE_TEXT: Final = f"[size](#{SIZES_ANCHOR})"
"""A size key's type: a link to that note."""
SIZES_NOTE: Final = (
    'A **size** is a number of bytes or a string such as `"256MiB"`, `"1.5KiB"` or `"1GB"` '
    "(units B, KB, MB, GB, KiB, MiB, GiB).\n{: #" + SIZES_ANCHOR + " }\n"
)
"""The note above the tables, when a key of the file is a size."""
WRAPPER_CLASS: Final = "config-reference"
"""The class of the block holding the tables: docs/stylesheets/reference.css keeps its key names
on one line (Material lets code break anywhere, mid-word)."""
_UNITS: Final = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
ROOT: Final = "(top level)"
"""The path shown for the file's top-level keys."""


@dataclass(frozen=True)
class Row:
    """One key of a table: its name, type, default and description, as markdown text."""

    key: str
    type: str
    default: str
    description: str


@dataclass
class Section:
    """One model's table of keys, at the first path of the file that reaches it."""

    path: str
    model: str
    description: str
    rows: list[Row] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "config-" + self.model.lower()


def _ref_name(schema: Schema) -> str | None:
    ref = schema.get("$ref")
    if ref is None:
        return None
    if not isinstance(ref, str) or not ref.startswith(REF_PREFIX):
        raise ValueError(f"unexpected $ref {ref!r}: the configuration reference knows only {REF_PREFIX}NAME")
    return ref.removeprefix(REF_PREFIX)


def _children(schema: Schema, path: str, array: bool = False) -> Iterator[tuple[str, str, bool]]:
    """(definition name, its dotted path in the file, whether it is an array of tables) for every
    nested table `schema` refers to."""
    name = _ref_name(schema)
    if name is not None:
        yield name, path, array
        return
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, ()):
            yield from _children(option, path, array)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _children(items, path, True)
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from _children(extra, f"{path}.NAME")
    for pattern in schema.get("patternProperties", {}).values():
        yield from _children(pattern, f"{path}.NAME")


def table_header(path: str, array: bool) -> str:
    """How the file writes the table at `path`: `[host]`, `[tooling.NAME]`, `[[tooling.NAME.tools]]`."""
    return f"[[{path}]]" if array else f"[{path}]"


def _bound(schema: Schema) -> str:
    parts = []
    for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in schema:
            parts.append(f"{sign} {schema[key]}")
    if "minLength" in schema:
        parts.append(f"at least {schema['minLength']} character(s)")
    if "minItems" in schema:
        parts.append(f"at least {schema['minItems']} item(s)")
    if "pattern" in schema:
        parts.append(f"matching `{schema['pattern']}`")
    if schema.get("format") == "path":
        parts.append("(a path, relative to the config file)")
    return " ".join(parts)


def type_text(schema: Schema, anchors: Mapping[str, str]) -> str:
    """A short description of a value's type: `integer ≥ 1`, `array of string`, a link to a table."""
    name = _ref_name(schema)
    if name is not None:
        return f"table ([{name}](#{anchors[name]}))"
    if _is_size(schema):
        return SIZE_TEXT
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(type_text(option, anchors) for option in schema[key])
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        inner = type_text(items, anchors) if isinstance(items, Mapping) else "anything"
        bound = _bound(schema)
        return f"array of {inner}" + (f" ({bound})" if bound else "")
    if kind == "object":
        extra = schema.get("additionalProperties")
        patterns = schema.get("patternProperties", {})
        if patterns:
            (pattern, value), *_ = patterns.items()
            return f"table of names matching `{pattern}` to {type_text(value, anchors)}"
        if isinstance(extra, Mapping):
            return f"table of names to {type_text(extra, anchors)}"
        return "table (any keys)"
    if isinstance(kind, str):
        bound = _bound(schema)
        return kind + (f" {bound}" if bound else "")
    if not schema:
        return "anything"
    raise ValueError(f"the configuration reference cannot describe the schema {json.dumps(schema)}")


def _is_size(schema: Schema) -> bool:
    return {key: value for key, value in schema.items() if key in SIZE_SCHEMA} == SIZE_SCHEMA


def default_text(schema: Schema, required: bool) -> str:
    """The default as TOML-like text (`30.0`, `"auto"`, `[]`), a size with its unit; or `required` / `optional`."""
    if "default" not in schema:
        return "required" if required else "optional"
    value = schema["default"]
    text = f"`{json.dumps(value, ensure_ascii=False)}`"
    if _is_size(schema) and isinstance(value, int):
        unit = next(((size, name) for size, name in _UNITS if value % size == 0), None)
        if unit is not None:
            text += f" ({value // unit[0]} {unit[1]})"
    return text


def _cell(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text).replace("|", "\\|").strip()


def sections(schema: Schema) -> list[Section]:
    """Every model's section, in the order a reader meets them walking the file from the top."""
    definitions: Mapping[str, Schema] = schema.get("definitions", {})
    order: list[tuple[str, str]] = []  # (definition, table header), root first
    seen: set[str] = set()

    def visit(name: str, path: str, header: str, model: Schema) -> None:
        order.append((name, header))
        for key, value in model.get("properties", {}).items():
            for child, child_path, array in _children(value, f"{path}.{key}" if path else key):
                if child not in seen:
                    if child not in definitions:
                        raise ValueError(f"{header} {key}: no definition {child!r} in the schema")
                    seen.add(child)
                    visit(child, child_path, table_header(child_path, array), definitions[child])

    visit("Config", "", ROOT, schema)
    anchors = {name: Section(path, name, "").anchor for name, path in order}
    result = []
    for name, path in order:
        model = schema if name == "Config" else definitions[name]
        required = set(model.get("required", ()))
        section = Section(path, name, model.get("description", ""))
        for key, value in model.get("properties", {}).items():
            section.rows.append(
                Row(
                    key=key,
                    type=type_text(value, anchors),
                    default=default_text(value, key in required),
                    description=value.get("description", ""),
                )
            )
        result.append(section)
    return result


def markdown(schema: Schema) -> str:
    """The reference as markdown: one section per model, a table of its keys, after a note on sizes
    (when a key is one), all in a block of class `WRAPPER_CLASS` (md_in_html)."""
    found = sections(schema)
    out = [f'<div class="{WRAPPER_CLASS}" markdown>\n']
    if any(SIZE_TEXT in row.type for section in found for row in section.rows):
        out.append(SIZES_NOTE)
    for section in found:
        title = "The file's top-level tables" if section.path == ROOT else f"`{section.path}`"
        out.append(f"## {title}: {section.model} {{#{section.anchor}}}\n")
        out.append(f"{_cell(section.description)}\n" if section.description else "")
        out.append("| key | type | default | description |")
        out.append("| --- | --- | --- | --- |")
        out.extend(
            f"| `{row.key}` | {_cell(row.type)} | {_cell(row.default)} | {_cell(row.description)} |"
            for row in section.rows
        )
        out.append("")
    out.append("</div>")
    return "\n".join(out)
