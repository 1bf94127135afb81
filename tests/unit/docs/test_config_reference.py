"""The configuration reference page names every key of every table, with its type, default and docstring.

The page is generated from the models' JSON Schema, so a key added in code appears in the docs with no
other edit. The models are walked from `Config` through every field's annotation (unions, tuples,
mappings), so a new model or field is checked without a change here.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from agent_host.config import Config
from agent_host.config.schema import json_schema
from agent_host_docs import config_reference


def models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation names, however deep (Optional, unions, tuples, Mapping, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        yield from models_in(typing.get_args(annotation)[0])
        return
    if origin is not None or isinstance(annotation, types.UnionType):
        for argument in typing.get_args(annotation):
            yield from models_in(argument)


def every_model() -> list[type[BaseModel]]:
    """Every model the file's tables are made of, from `Config` down."""
    found: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = [Config]
    while todo:
        model = todo.pop()
        if model in found:
            continue
        found.append(model)
        for field in model.model_fields.values():
            todo.extend(models_in(field.annotation))
    return found


def key_of(name: str, model: type[BaseModel]) -> str:
    field = model.model_fields[name]
    return field.alias or name


@pytest.fixture(scope="module")
def sections() -> dict[str, config_reference.Section]:
    return {section.model: section for section in config_reference.sections(json_schema())}


def test_the_walk_reaches_the_nested_tables() -> None:
    names = {model.__name__ for model in every_model()}
    nested = {"HostSettings", "AgentConfig", "DirGrant", "ServeSettings", "MockTool", "MockResult", "OAuthConfig"}
    assert nested <= names


def test_every_field_of_every_model_is_a_row_of_its_models_section_with_its_docstring(
    sections: dict[str, config_reference.Section],
) -> None:
    for model in every_model():
        assert model.__name__ in sections, f"no section for {model.__name__}"
        rows = {row.key: row for row in sections[model.__name__].rows}
        for name, field in model.model_fields.items():
            key = key_of(name, model)
            assert key in rows, f"{model.__name__}.{key} is missing from the configuration reference"
            if field.description:
                assert " ".join(field.description.split()) in " ".join(rows[key].description.split())


def test_every_key_is_in_the_markdown_under_its_tables_heading(sections: dict[str, config_reference.Section]) -> None:
    text = config_reference.markdown(json_schema())
    for model in every_model():
        section = sections[model.__name__]
        start = text.index(f"{{#{section.anchor}}}")
        end = text.find("\n## ", start)
        body = text[start : end if end >= 0 else None]
        for name in model.model_fields:
            assert f"| `{key_of(name, model)}` |" in body, (model.__name__, name)


def test_types_defaults_and_tables_read_as_the_file_writes_them(sections: dict[str, config_reference.Section]) -> None:
    host = {row.key: row for row in sections["HostSettings"].rows}
    assert host["memory"].default == "`268435456` (256 MiB)" and host["memory"].type == "[size](#config-sizes)"
    assert host["cpu_time"].type == "number > 0" and host["cpu_time"].default == "`60.0`"
    assert host["executor"].type == 'one of `"local"`, `"ray"`'
    assert host["ray_address"].default == "optional"
    stdio = {row.key: row for row in sections["StdioToolingConfig"].rows}
    assert stdio["command"].default == "required"
    assert sections["DirGrant"].path == "[[agents.NAME.dirs]]"
    assert sections["MockResult"].path == "[[tooling.NAME.tools.results]]"
    assert sections["OAuthConfig"].path == "[tooling.NAME.auth]"
    assert sections["AgentConfig"].path == "[agents.NAME]" and sections["HostSettings"].path == "[host]"


def test_the_size_syntax_is_said_once_above_the_tables_each_size_key_links_to() -> None:
    text = config_reference.markdown(json_schema())
    assert text.count('"1.5KiB"') == 1 and text.count("](#config-sizes)") > 3
    assert text.index("{: #config-sizes }") < text.index("| key | type |")


def test_the_tables_sit_in_the_block_whose_key_names_the_stylesheet_keeps_whole() -> None:
    text = config_reference.markdown(json_schema())
    assert text.startswith('<div class="config-reference" markdown>\n') and text.endswith("\n</div>")
    stylesheet = (Path(__file__).resolve().parents[3] / "docs" / "stylesheets" / "reference.css").read_text()
    assert ".config-reference td:first-child code" in stylesheet and "white-space: nowrap" in stylesheet


def test_a_key_added_to_a_model_appears_with_no_other_edit() -> None:
    """A model written here, as a new table would be: its keys, nested table and docstrings all appear."""

    class Inner(BaseModel):
        """A nested table."""

        model_config = ConfigDict(use_attribute_docstrings=True)  # as the config's models (config/base.py)

        depth: int = Field(default=3, ge=1)
        """How deep it goes."""

    class Added(BaseModel):
        """A new file's top level."""

        model_config = ConfigDict(use_attribute_docstrings=True)

        shiny: str = "new"
        """A key added in code."""
        inners: tuple[Inner, ...] = ()
        """Nested tables."""
        by_name: Mapping[str, Inner] = {}

    schema = Added.model_json_schema(ref_template="#/definitions/{model}")
    schema["definitions"] = schema.pop("$defs")
    sections = config_reference.sections({**schema, "title": "Config"})
    first, inner = sections
    assert [row.key for row in first.rows] == ["shiny", "inners", "by_name"]
    assert first.rows[0].description == "A key added in code." and first.rows[0].default == '`"new"`'
    assert inner.model == "Inner" and inner.path == "[[inners]]"
    assert [(row.key, row.type, row.default, row.description) for row in inner.rows] == [
        ("depth", "integer ≥ 1", "`3`", "How deep it goes.")
    ]
    assert "table ([Inner](#config-inner))" in first.rows[1].type


def test_a_schema_the_walk_does_not_know_fails_rather_than_hide_a_key() -> None:
    with pytest.raises(ValueError, match="cannot describe"):
        config_reference.type_text({"not": {"type": "string"}}, {})
    with pytest.raises(ValueError, match="unexpected \\$ref"):
        config_reference.type_text({"$ref": "other.json#/x"}, {})
