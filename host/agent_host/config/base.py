"""What every table of the config file shares, and the context it is validated in.

- `Table`: frozen, unknown keys refused; `needs`, `elsewhere` and `example` give the error
  formatter its words for a missing key, a key of another kind of table, a value of the wrong type.
- `Placed` / `Named`: a table's origin (`FILE [host]`) and name, set by its parent, never read
  from its keys.
- `Source`: the validation context: the file (relative paths, origins), the names of the
  `[tooling.NAME]` and `[provider.NAME]` tables, so that a cross-reference is checked where it is
  written, and the tree as written (before `${VAR}` expansion), for what messages quote.
- `fail` raises several problems at once, each at its own key below the table being validated;
  a rule between keys names the keys it `uses`, so that it is not judged against a key whose own
  value was wrong (the loader checks every rule of a file even when some values are wrong).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final, NoReturn, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

PROBLEM: Final = "config"
"""Error type of every problem this package raises itself; `ctx` holds its `problem` and `hint`."""

TAG_ERROR: Final = "tag:"
"""Prefix of the error type of a discriminator; the rest names the key holding the tag (`tag:kind`)."""


@dataclass(frozen=True)
class Need:
    """What to say when a required key is missing or empty."""

    message: str
    hint: str | None = None
    at_table: bool = True
    """Name the table holding the key (`tooling.a: ...`) rather than the key itself."""


class Table(BaseModel):
    """A table of the config file: frozen, unknown keys refused; field docstrings are the schema's
    descriptions (`config.schema`); validators are built at first use (`defer_build`: ~100 ms less
    for every process)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    needs: ClassVar[Mapping[str, Need]] = {}
    """What to say when a required key is missing or empty, by key."""

    elsewhere: ClassVar[Mapping[str, str]] = {}
    """What to say about a key that belongs to another kind of table, by key."""

    example: ClassVar[str | None] = None
    """An inline table to show when something else was written in its place."""


class Placed(Table):
    """A table that messages name by where it was defined."""

    _origin: str = PrivateAttr(default="<default>")

    @property
    def origin(self) -> str:
        """Where this table was defined, for messages: `FILE [host]`."""
        return self._origin

    def placed(self, origin: str) -> Self:
        """A copy whose `origin` is `origin`."""
        copy = self.model_copy()
        copy._origin = origin
        return copy


class Named(Placed):
    """A table defined under a name: `[tooling.NAME]`, `[agents.NAME]`."""

    _name: str = PrivateAttr(default="")

    @property
    def name(self) -> str:
        """The NAME of its table."""
        return self._name

    def named(self, name: str, origin: str) -> Self:
        """A copy called `name`, defined at `origin` (`FILE [tooling.NAME]`)."""
        copy = self.placed(origin)
        copy._name = name
        return copy


@dataclass(frozen=True)
class Source:
    """The validation context: where the tree being validated comes from."""

    file: Path | None = None
    """The config file; None for a configuration built in code (the embedded default)."""
    toolings: frozenset[str] | None = None
    """The names of the file's `[tooling.NAME]` tables; None: cross-references are not checked."""
    providers: frozenset[str] | None = None
    """The names of the file's `[provider.NAME]` tables; None: cross-references are not checked."""
    written: Mapping[str, Any] | None = None
    """The file's tree as written, before `${VAR}` expansion (what messages may quote); None: as validated."""

    def as_written(self, *steps: str) -> Any:
        """The raw value at the key path `steps` of `written`; None when absent."""
        value: Any = self.written
        for step in steps:
            value = value.get(step) if isinstance(value, Mapping) else None
        return value

    @property
    def base(self) -> Path | None:
        """The folder relative paths are resolved against; None: left as written."""
        return self.file.parent if self.file is not None else None

    def where(self) -> str:
        """The file as messages name it."""
        return str(self.file) if self.file is not None else "embedded default"


def source_of(info: ValidationInfo) -> Source:
    """The `Source` a validation runs in (an empty one when none was given)."""
    return info.context if isinstance(info.context, Source) else Source()


def shown(value: object) -> str:
    """A value of the file as a message quotes it: Python's quoting for text and numbers (what
    `errors.Problem.shown` finds and replaces), TOML's own text for a date or time."""
    return value.isoformat() if isinstance(value, datetime.date | datetime.time) else repr(value)


def problem(message: str, hint: str | None = None) -> PydanticCustomError:
    """A problem at the value being validated (the formatter reads `message` and `hint` from `ctx`)."""
    return PydanticCustomError(PROBLEM, "{problem}", {"problem": message, "hint": hint})


@dataclass(frozen=True)
class At:
    """A problem at `loc`, relative to the table being validated, found by a rule that reads the keys
    `uses` (relative key paths; by default the key at `loc`)."""

    loc: tuple[str | int, ...]
    message: str
    hint: str | None = None
    value: object = None
    uses: tuple[tuple[str | int, ...], ...] | None = None


def fail(title: str, problems: Sequence[At]) -> NoReturn:
    """Raise every one of `problems` in one `ValidationError` (pydantic prefixes each location).
    Each carries in its `ctx` the keys it `uses` and the depth of its `loc`, for the loader."""
    details = []
    for p in problems:
        uses = p.uses if p.uses is not None else (p.loc,)
        context = {"problem": p.message, "hint": p.hint, "uses": uses, "depth": len(p.loc)}
        error = PydanticCustomError(PROBLEM, "{problem}", context)
        details.append(InitErrorDetails(type=error, loc=p.loc, input=p.value))
    raise ValidationError.from_exception_data(title, details)
