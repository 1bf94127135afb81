"""One formatter: every problem of a config file as one `ConfigError`.

`findings_of` turns a pydantic `ValidationError` into `Finding`s: a `Problem` (dotted key, what was
found, what is expected, a hint), the keys to leave out to check the rest, and for a rule between
keys the keys it read. The words are chosen by error type from one table (`_WORDS`): a type error
says what is expected and what was found (`expected a string, got an integer (3)`), a bound says
the bound, a missing or unknown key uses its table's `needs` / `elsewhere` (or lists the known
keys), a problem this package raised keeps its own words, any other says what is expected and what
was found: pydantic's words, error types and labels never reach a message. `config_error` names the
file on every line (`FILE: KEY: PROBLEM`), each hint after its problem. Values are quoted with
`!r`; `Problem.shown` puts the file's text in place of a value that came from a `${...}` reference.
"""

from __future__ import annotations

import datetime
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agent_host.config.base import PROBLEM, TAG_ERROR, Table, shown
from agent_host.config.keys import Place, Step, bare, locate
from agent_host.errors import ConfigError

BARE_VALUE_MINIMUM: Final = 6
"""Characters an expanded value needs to be hidden where a message names it without quotes (a shorter
one would match ordinary words); a quoted one is hidden whatever its length."""


@dataclass(frozen=True)
class Problem:
    """One mistake in a config file."""

    key: str
    """The dotted key path (`tooling.files.args`); "" for the file as a whole."""
    message: str
    hint: str | None = None

    def shown(self, written: Mapping[str, str], secret: frozenset[str] = frozenset()) -> Problem:
        """This problem quoting, for each expanded string of `written`, the text of the file in
        its place (`${VAR:-default}`, as written): where the message quotes it (`!r`), and, for one
        that took a value from the environment (`secret`), anywhere when it has at least
        `BARE_VALUE_MINIMUM` characters, so that no value from the environment shows."""
        if not written:
            return self

        def hide(text: str) -> str:
            for value, raw in sorted(written.items(), key=lambda item: -len(item[0])):
                text = text.replace(repr(value), repr(raw))
                if value in secret and len(value) >= BARE_VALUE_MINIMUM:
                    text = text.replace(value, raw)
            return text

        return Problem(self.key, hide(self.message), hide(self.hint) if self.hint is not None else None)

    def line(self, source: str) -> str:
        """`SOURCE: KEY: MESSAGE`, as the error lists it."""
        return f"{source}: {self.key}: {self.message}" if self.key else f"{source}: {self.message}"


_NAMES: Final[dict[type, str]] = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a table",
    datetime.datetime: "a date-time",
    datetime.date: "a date",
    datetime.time: "a time",
}
"""What each kind of TOML value is called in a message."""

_SIMPLE: Final[dict[Any, str]] = {
    str: "a string",
    Path: "a string",
    bool: "true or false",
    int: "a whole number",
    float: "a number",
}


def found(value: object) -> str:
    """A value as a message quotes it with its type: `an integer (3)`, `a date (1979-05-27)`."""
    return f"{_NAMES.get(type(value), 'a value')} ({shown(value)})"


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
    if origin in (Union, types.UnionType):
        return " or ".join(dict.fromkeys(expected(member) for member in args if member is not type(None)))
    return _SIMPLE.get(tp, "a valid value")


@dataclass(frozen=True)
class _Error:
    """One pydantic error, with where it landed."""

    place: Place
    value: Any
    context: Mapping[str, Any]
    message: str

    @property
    def table(self) -> type[Table] | None:
        """The model of the table holding the key, when it is one of ours."""
        owner = self.place.owner
        return owner if owner is not None and issubclass(owner, Table) else None

    @property
    def field(self) -> str:
        """The key the error is about ("" when it is not a key of a table)."""
        return self.place.field or ""


def _own_words(error: _Error) -> Problem:
    return Problem(error.place.key, str(error.context["problem"]), error.context.get("hint"))


def _needed(error: _Error) -> Problem:
    table = error.table
    if table is not None and error.field in table.needs:
        need = table.needs[error.field]
        return Problem(error.place.table if need.at_table else error.place.key, need.message, need.hint)
    if error.value in ("", (), []):
        return Problem(error.place.key, f"expected {expected(error.place.annotation)} that is not empty")
    return Problem(error.place.table, f"needs `{error.field}`")


def _unknown(error: _Error) -> Problem:
    table = error.table
    if table is not None and error.field in table.elsewhere:
        return Problem(error.place.key, table.elsewhere[error.field])
    known = ", ".join(sorted(table.model_fields)) if table is not None else ""
    return Problem(error.place.key, "unknown key", f"known keys here: {known}" if known else None)


def _wrong_type(error: _Error) -> Problem:
    annotation = error.place.annotation
    table = annotation if isinstance(annotation, type) and issubclass(annotation, Table) else None
    hint = f"e.g. {table.example}" if table is not None and table.example else None
    return Problem(error.place.key, f"expected {expected(annotation)}, got {found(error.value)}", hint)


def _wrong_value(error: _Error) -> Problem:
    return Problem(error.place.key, f"expected {expected(error.place.annotation)}, got {error.value!r}")


_BOUNDS: Final = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
"""pydantic's names of a bound in an error's `ctx` -> how a message writes it."""


def _out_of_bounds(error: _Error) -> Problem:
    bounds = " and ".join(f"{sign} {error.context[name]}" for name, sign in _BOUNDS.items() if name in error.context)
    return Problem(error.place.key, f"expected {expected(error.place.annotation)} {bounds}, got {error.value!r}")


def _tag(error: _Error, key: str) -> Problem:
    if not isinstance(error.value, dict):
        return Problem(error.place.key, f"expected a table, got {found(error.value)}")
    if key not in error.value:
        return Problem(error.place.key, f"needs `{key}`: {error.message}")
    return Problem(f"{error.place.key}.{key}", f"expected {error.message}, got {error.value.get(key)!r}")


def _other(error: _Error) -> Problem:
    """Any other error: what the key takes and what was found (never pydantic's message)."""
    return Problem(error.place.key, f"expected {expected(error.place.annotation)}, got {found(error.value)}")


_TYPE_ERRORS: Final = (
    "string_type",
    "bool_type",
    "int_type",
    "float_type",
    "dict_type",
    "mapping_type",
    "model_type",
    "model_attributes_type",
    "list_type",
    "tuple_type",
    "path_type",
    "union_tag_not_found",
)

_WORDS: Final[dict[str, Callable[[_Error], Problem]]] = {
    PROBLEM: _own_words,
    "missing": _needed,
    "too_short": _needed,
    "string_too_short": _needed,
    "extra_forbidden": _unknown,
    "literal_error": _wrong_value,
    **dict.fromkeys(("greater_than", "greater_than_equal", "less_than", "less_than_equal"), _out_of_bounds),
    **dict.fromkeys(_TYPE_ERRORS, _wrong_type),
}
"""The words of a problem, by pydantic error type (a discriminator's type is `tag:KEY`)."""


def _problem(kind: str, error: _Error) -> Problem:
    if kind.startswith(TAG_ERROR):
        return _tag(error, kind.removeprefix(TAG_ERROR))
    if error.place.in_union and kind != PROBLEM:  # every member's error is about the one value
        return _other(error)
    return _WORDS.get(kind, _other)(error)


@dataclass(frozen=True)
class Finding:
    """One problem of a validation, and what the loader needs to check the rest of the file."""

    problem: Problem
    prune: tuple[tuple[Step, ...], ...]
    """The keys to leave out of the tree so that the rest can be checked without this problem (a
    wrong value's key, the table of a missing key or a wrong tag, the keys a broken rule read), each
    a key path up to its last key (a list is left out whole)."""
    uses: tuple[tuple[Step, ...], ...] | None = None
    """For a rule between keys (`base.At`): the key paths it read; None for a problem of one value."""


def _up_to_a_key(steps: Sequence[Step]) -> tuple[Step, ...]:
    """`steps` up to its last key of a table (list indexes after it dropped)."""
    keys = [index for index, step in enumerate(steps) if isinstance(step, str)]
    return tuple(steps[: keys[-1] + 1]) if keys else ()


def _finding(details: ErrorDetails, root: type[BaseModel]) -> Finding:
    kind, context = details["type"], details.get("ctx") or {}
    place = locate(root, details["loc"])
    problem = _problem(kind, _Error(place, details.get("input"), context, details["msg"]))
    if kind == PROBLEM and "uses" in context:
        table = place.steps[: len(place.steps) - int(context["depth"])]
        uses = tuple((*table, *used) for used in context["uses"])
        return Finding(problem, tuple(_up_to_a_key(used) for used in uses), uses)
    if kind == "missing":
        return Finding(problem, (_up_to_a_key(place.steps[:-1]),))
    return Finding(problem, (_up_to_a_key(place.steps),))


def findings_of(exc: ValidationError, root: type[BaseModel]) -> list[Finding]:
    """Every problem in `exc` (raised validating `root`), in order, each once."""
    return list(dict.fromkeys(_finding(error, root) for error in exc.errors()))


def problems_of(exc: ValidationError, root: type[BaseModel]) -> list[Problem]:
    """Every problem in `exc` (raised validating `root`), in order, each once."""
    return list(dict.fromkeys(finding.problem for finding in findings_of(exc, root)))


def config_error(source: Path | str, problems: Sequence[Problem]) -> ConfigError:
    """One error naming `source` and every one of `problems` (at least one)."""
    if len(problems) == 1:
        return ConfigError(problems[0].line(str(source)), hint=problems[0].hint)
    lines = [problem.line(str(source)) + (f"\n  hint: {problem.hint}" if problem.hint else "") for problem in problems]
    return ConfigError("\n".join(lines), problems=tuple(lines))
