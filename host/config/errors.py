"""One formatter: every problem of a config file as one `ConfigError`.

`problems_of` turns a pydantic `ValidationError` into `Problem`s. Each one has a dotted key, what
was found, what is expected, and a hint when there is one. The words are chosen by error type, from
a table: a type error says what is expected and what was found (`expected a string, got an integer
(3)`); a missing or empty key uses its table's `needs`; an unknown key uses its table's `elsewhere`,
or lists the keys known there; a problem this package raised keeps its own words. `config_error`
names the file on every line: `FILE: KEY: PROBLEM`. With a single problem its hint is the error's
hint; with several, each hint follows its own problem.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from host.config.base import PROBLEM, TAG_ERROR, Table
from host.config.keys import bare, locate
from host.errors import ConfigError


@dataclass(frozen=True)
class Problem:
    """One mistake in a config file."""

    key: str
    """The dotted key path (`tooling.files.args`); "" for the file as a whole."""
    message: str
    hint: str | None = None

    def line(self, source: str) -> str:
        return f"{source}: {self.key}: {self.message}" if self.key else f"{source}: {self.message}"


_NAMES: Final[dict[type, str]] = {
    bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"
}  # fmt: skip

_SIMPLE: Final[dict[Any, str]] = {
    str: "a string", Path: "a string", bool: "true or false", int: "a whole number", float: "a number"
}  # fmt: skip

_TYPE_ERRORS: Final = frozenset(
    {
        "string_type", "bool_type", "int_type", "float_type", "dict_type", "mapping_type", "model_type",
        "model_attributes_type", "list_type", "tuple_type", "path_type", "union_tag_not_found",
    }
)  # fmt: skip
"""Errors about the type of a value: the message says which type was found."""

_EMPTY_ERRORS: Final = frozenset({"missing", "too_short", "string_too_short"})
"""Errors about a required key that is missing or empty: the table's `needs` says what to write."""


def found(value: object) -> str:
    """A value as a message quotes it with its type: `an integer (3)`."""
    return f"{_NAMES.get(type(value), type(value).__name__)} ({value!r})"


def expected(tp: Any) -> str:
    """What a value of type `tp` looks like, for a person: `a list of strings`."""
    tp = bare(tp)
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        quoted = [f'"{arg}"' for arg in args]
        return " or ".join(quoted) if len(quoted) <= 2 else f"one of {', '.join(quoted)}"
    if origin in (tuple, list) and args:
        item = "a string" if get_origin(bare(args[0])) is Literal else expected(args[0])
        return {"a string": "a list of strings", "a table": "a list of tables"}.get(item, "a list")
    if origin in (dict, Mapping) and len(args) == 2:
        return "a table of strings" if expected(args[1]) == "a string" else "a table"
    if (isinstance(tp, type) and issubclass(tp, BaseModel)) or origin is Annotated:
        return "a table"
    return _SIMPLE.get(tp, "a valid value")


def _problem(error: ErrorDetails, root: type[BaseModel]) -> Problem:
    place = locate(root, error["loc"])
    kind, value, context = error["type"], error.get("input"), error.get("ctx") or {}
    owner = place.owner if place.owner is not None and issubclass(place.owner, Table) else None
    field = place.field or ""
    if kind == PROBLEM:
        return Problem(place.key, str(context["problem"]), context.get("hint"))
    if kind.startswith(TAG_ERROR):
        if not isinstance(value, dict):
            return Problem(place.key, f"expected a table, got {found(value)}")
        key = kind.removeprefix(TAG_ERROR)
        return Problem(f"{place.key}.{key}", f"expected {error['msg']}, got {value.get(key)!r}")
    if kind in _EMPTY_ERRORS and owner is not None and field in owner.needs:
        need = owner.needs[field]
        return Problem(place.table if need.at_table else place.key, need.message, need.hint)
    if kind == "missing":
        return Problem(place.table, f"needs `{field}`")
    if kind == "extra_forbidden":
        if owner is not None and field in owner.elsewhere:
            return Problem(place.key, owner.elsewhere[field])
        known = ", ".join(sorted(owner.model_fields)) if owner is not None else ""
        return Problem(place.key, "unknown key", f"known keys here: {known}" if known else None)
    if kind in _TYPE_ERRORS:
        table = place.annotation if isinstance(place.annotation, type) and issubclass(place.annotation, Table) else None
        hint = f"e.g. {table.example}" if table is not None and table.example else None
        return Problem(place.key, f"expected {expected(place.annotation)}, got {found(value)}", hint)
    if kind == "literal_error":
        return Problem(place.key, f"expected {expected(place.annotation)}, got {value!r}")
    return Problem(place.key, f"{error['msg']}, got {value!r}")


def problems_of(exc: ValidationError, root: type[BaseModel]) -> list[Problem]:
    """Every problem in `exc` (raised validating `root`), in order, each once."""
    return list(dict.fromkeys(_problem(error, root) for error in exc.errors()))


def config_error(source: Path | str, problems: Sequence[Problem]) -> ConfigError:
    """One error naming `source` and every one of `problems` (at least one)."""
    if len(problems) == 1:
        return ConfigError(problems[0].line(str(source)), hint=problems[0].hint)
    lines = [problem.line(str(source)) + (f"\n  hint: {problem.hint}" if problem.hint else "") for problem in problems]
    return ConfigError("\n".join(lines))
