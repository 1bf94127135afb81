"""`${VAR}` expansion: one pass over the raw TOML tree, before validation, that keeps key paths.

`${VAR}` is replaced from the environment, `${VAR:-default}` falls back to `default` (itself
expanded: `${A:-${B}}`, `${A:-$$5}`), and `$$` is a literal `$`; a `$` before anything else is
kept. `${AGENT_HOST_PYTHON}` is always defined: it is the interpreter running the host. Every
string value is expanded except free JSON values, those typed `Any` in the models (a mock tool's
schema, a scripted result): they are kept exactly as written. Keys are never expanded. An unset
variable without a default, and a `${...}` of another form (`${VAR-x}`, `${VAR:=x}`, an unclosed
`${`), are problems naming their dotted key; every such problem is reported, and its string is left
as written. `Expanded.written` maps every expanded string back to the text of the file, so that
messages quote what the file says (`${TOKEN}`, `${PORT:-8080}`); `Expanded.secret` holds those
that took a value from the environment, which no message may show even unquoted.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel

from agent_host.config.errors import Problem
from agent_host.config.keys import Step, child, dotted, resolve

PYTHON_VARIABLE: Final = "AGENT_HOST_PYTHON"
"""Always-defined variable for `${...}` expansion: the Python interpreter running the host."""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FORMS: Final = "write ${VAR}, ${VAR:-default} (used when VAR is unset), or $$ for a literal $"
"""The references `expand` reads, for messages about one it does not."""


@dataclass(frozen=True)
class Expanded:
    """A raw TOML tree after expansion."""

    tree: dict[str, Any]
    """The tree, its strings expanded."""
    problems: list[Problem] = field(default_factory=list)
    """Unset variables without a default and references of another form, each at its key."""
    written: dict[str, str] = field(default_factory=dict)
    """Each expanded string -> the string as the file writes it."""
    secret: frozenset[str] = frozenset()
    """The expanded strings of `written` that took a value from the environment."""


class _Unread(ValueError):
    """A `${` that does not start a reference `expand` reads; the message says what it found."""


@dataclass
class _Text:
    """Expanding one string: what it took from the environment, which variables were unset."""

    env: Mapping[str, str]
    from_environment: bool = False
    values: list[str] = field(default_factory=list)
    """Each value read from the environment (a secret on its own, as much as the whole string)."""
    unset: list[str] = field(default_factory=list)

    def expand(self, text: str, start: int = 0, *, inside: bool = False) -> tuple[str, int]:
        """`text` from `start` expanded, up to its end (or, `inside` a default, up to the `}` that
        closes it: the index after it is returned). Raises `_Unread`."""
        out: list[str] = []
        index = start
        while index < len(text):
            char = text[index]
            if inside and char == "}":
                return "".join(out), index + 1
            if char != "$" or index + 1 == len(text) or text[index + 1] not in "${":
                out.append(char)
                index += 1
            elif text[index + 1] == "$":
                out.append("$")
                index += 2
            else:
                value, index = self._reference(text, index)
                out.append(value)
        if inside:
            raise _Unread(f"{text[start - 2 :]!r} has no closing `}}`")
        return "".join(out), index

    def _reference(self, text: str, start: int) -> tuple[str, int]:
        """The value of the reference `${...}` at `start`, and the index after it."""
        name = _NAME.match(text, start + 2)
        after = name.end() if name is not None else start + 2
        if name is not None and text.startswith("}", after):
            return self._value(name.group(), None), after + 1
        if name is not None and text.startswith(":-", after):
            default, end = self.expand(text, after + 2, inside=True)
            return self._value(name.group(), default), end
        close = text.find("}", start)
        shown = text[start : close + 1] if close >= 0 else text[start:]
        raise _Unread(f"{shown!r} is not a reference agent-host reads")

    def _value(self, variable: str, default: str | None) -> str:
        if variable in self.env:
            self.from_environment = self.from_environment or variable != PYTHON_VARIABLE
            if variable != PYTHON_VARIABLE:
                self.values.append(self.env[variable])
            return self.env[variable]
        if default is not None:
            return default
        self.unset.append(variable)
        return "${" + variable + "}"


def expand(tree: dict[str, Any], environ: Mapping[str, str], root: type[BaseModel]) -> Expanded:
    """`tree` (validated later as `root`) with its strings expanded, the problems of its
    references, and what each expanded string was written as."""
    env = {PYTHON_VARIABLE: sys.executable, **environ}
    problems: list[Problem] = []
    written: dict[str, str] = {}
    secret: set[str] = set()

    def text(value: str, path: tuple[Step, ...]) -> str:
        if "$" not in value:
            return value
        scan = _Text(env)
        try:
            expanded, _ = scan.expand(value)
        except _Unread as exc:
            problems.append(Problem(dotted(path), str(exc), FORMS))
            return value
        for variable in scan.unset:
            hint = f"set {variable}, or write ${{{variable}:-default}} to give a default"
            problems.append(Problem(dotted(path), f"environment variable {variable} is not set", hint))
        if scan.unset:
            return value
        if expanded != value:
            written[expanded] = value
            if scan.from_environment:
                secret.add(expanded)
                secret.update(scan.values)
        return expanded

    def walk(value: Any, tp: Any, path: tuple[Step, ...]) -> Any:
        if tp is Any:
            return value
        if isinstance(value, str):
            return text(value, path)
        resolved = resolve(tp, value)
        if isinstance(value, dict):
            return {key: walk(item, child(resolved, key), (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, child(resolved, index), (*path, index)) for index, item in enumerate(value)]
        return value

    expanded: dict[str, Any] = walk(tree, root, ())
    return Expanded(expanded, problems, written, frozenset(secret))
