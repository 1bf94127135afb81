"""`${VAR}` expansion: one pass over the raw TOML tree, before validation, that keeps key paths.

`${VAR}` is replaced from the environment, `${VAR:-default}` falls back to `default`, and `$$` is a
literal `$`. `${AGENT_HOST_PYTHON}` is always defined: it is the interpreter running the host.
Every string value is expanded except free JSON values, those typed `Any` in the models (a mock
tool's schema, a scripted result): they are kept exactly as written. Keys are never expanded. An
unset variable without a default is a problem naming its dotted key. Every such problem is
reported, and its string is left as written. `Expanded.written` maps every string that took a value
from the environment back to the text of the file, so that no message shows the value (a token).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel

from host.config.errors import Problem
from host.config.keys import Step, child, dotted, resolve

PYTHON_VARIABLE: Final = "AGENT_HOST_PYTHON"
"""Always-defined variable for `${...}` expansion: the Python interpreter running the host."""

_VARIABLE: Final = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\})")


@dataclass(frozen=True)
class Expanded:
    """A raw TOML tree after expansion."""

    tree: dict[str, Any]
    """The tree, its strings expanded."""
    problems: list[Problem] = field(default_factory=list)
    """Unset variables without a default, each at its key."""
    written: dict[str, str] = field(default_factory=dict)
    """Each expanded string that took a value from the environment -> the string as the file writes it."""


def expand(tree: dict[str, Any], environ: Mapping[str, str], root: type[BaseModel]) -> Expanded:
    """`tree` (validated later as `root`) with its strings expanded, the unset variables, and what
    each string that took a value from the environment was written as."""
    env = {PYTHON_VARIABLE: sys.executable, **environ}
    problems: list[Problem] = []
    written: dict[str, str] = {}

    def text(value: str, path: tuple[Step, ...]) -> str:
        from_environment = False

        def replace(match: re.Match[str]) -> str:
            nonlocal from_environment
            if match.group(0) == "$$":
                return "$"
            variable, default = match.group(1), match.group(2)
            if variable in env:
                from_environment = from_environment or variable != PYTHON_VARIABLE
                return env[variable]
            if default is not None:
                return default
            hint = f"set {variable}, or write ${{{variable}:-default}} to give a default"
            problems.append(Problem(dotted(path), f"environment variable {variable} is not set", hint))
            return match.group(0)

        expanded = _VARIABLE.sub(replace, value)
        if from_environment:
            written[expanded] = value
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
    return Expanded(expanded, problems, written)
