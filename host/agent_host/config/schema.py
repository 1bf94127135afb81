"""The JSON Schema of the config file, for editors (taplo / Even Better TOML: `#:schema FILE`).

It is generated from the models, so it accepts exactly the keys they accept, with their types,
defaults and descriptions. It is written in draft-07 (`definitions`, `enum` for a single value),
which editors read widely. Rules that span keys or tables (exactly one of two keys, an agent naming
a defined tooling) are checked only by `agent-host config check`.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from typing import Any, Final

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from agent_host.config.models import Config

DIALECT: Final = "http://json-schema.org/draft-07/schema#"


class _TomlSchema(GenerateJsonSchema):
    """The schema of a TOML file: no null (TOML has none; an optional key is simply left out), no
    titles derived from field names ("Command" for `command`), table names checked by their rule."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        generated = super().literal_schema(schema)
        if "const" in generated:
            generated["enum"] = [generated.pop("const")]
        return generated

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        generated = super().dict_schema(schema)
        if "patternProperties" in generated:  # names with a rule (agents): refuse the others
            generated.setdefault("additionalProperties", False)
        return generated

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        generated = super().model_schema(schema)
        model = schema["cls"]
        documented = attribute_docstrings(model)
        for name, field in getattr(model, "model_fields", {}).items():
            key = field.alias or name
            prop = generated.get("properties", {}).get(key)
            if isinstance(prop, dict) and "description" not in prop and name in documented:
                prop["description"] = documented[name]
        return generated

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        generated = super().default_schema(schema)
        if generated.get("default", 0) is None:
            del generated["default"]
        return generated


def attribute_docstrings(model: type) -> dict[str, str]:
    """The docstrings written under the fields of `model` and its bases (the string right after an
    annotated assignment), read from the source only when a schema is made: reading them when the
    classes are defined (pydantic's `use_attribute_docstrings`) cost every process ~50 ms."""
    found: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for statement, following in zip(body, body[1:], strict=False):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[statement.target.id] = inspect.cleandoc(following.value.value)
    return found


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft-07) of `agent-host.toml`."""
    schema = Config.model_json_schema(ref_template="#/definitions/{model}", schema_generator=_TomlSchema)
    definitions = schema.pop("$defs", {})
    schema["title"] = "agent-host configuration (agent-host.toml)"
    return {"$schema": DIALECT, **schema, "definitions": definitions}


def schema_text() -> str:
    """`json_schema()` as indented JSON text, ending with a newline."""
    return json.dumps(json_schema(), indent=2) + "\n"
