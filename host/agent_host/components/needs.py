"""What a guest's source asks for: the toolings it names, in every form the docs teach.

Python: `get("NAME")` and `tooling("NAME")` imported from `agentlib` (`agentlib.get("NAME")`, aliases
too), and the raw WIT `tooling.get("NAME")` (`wit_world.imports.tooling`). JavaScript: `get("NAME")`
of a module importing `agent-host:guest/tooling`, and `tooling("NAME")` of one importing the library
`agentlib` (each named, renamed or as a namespace). Read with `ast`
from the guest folder's `.py` files and by regular expressions from its `.js` files (hidden folders,
caches and `node_modules` left out), never run. Only a name written as a string literal is seen: the
result is what the guest may ask for, not all it may. A file that does not parse is skipped (building
reports it). Used by `config init` (an agent is written only when the file gives it what it asks
for) and `config check` (a warning for each tooling an agent could not get).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

MAX_SOURCE_BYTES: Final = 1024 * 1024
"""A larger `.py` file of a guest folder is not read (it is data, not the agent's code)."""

_SKIPPED: Final = frozenset({"__pycache__", "node_modules", "site-packages"})

JS_GETTERS: Final = {r"agent-host:guest/tooling@[^\"']*": "get", "agentlib": "tooling"}
"""The modules whose function (by its exported name) gets a tooling: the WIT interface's `get`, the
library's `tooling` (its specifier, as a regular expression)."""
JS_NAMED_IMPORT: Final = r"""\bimport\s*\{{([^}}]*)\}}\s*from\s*["']{module}["']"""
"""A JavaScript module's named import from `{module}` (`import { get } from ...`)."""
JS_NAMESPACE_IMPORT: Final = r"""\bimport\s*\*\s*as\s+([A-Za-z_$][\w$]*)\s+from\s*["']{module}["']"""
"""A JavaScript module's namespace import of `{module}` (`import * as tooling from ...`)."""
JS_GET: Final = r"""\b{name}\(\s*(["'])([^"'\\]+)\1\s*\)"""
"""A call of the imported `get` (possibly renamed: `{name}`) with a string literal."""


@dataclass(frozen=True)
class Asked:
    """One tooling a guest asks for, and where it first does."""

    tooling: str
    file: Path
    line: int

    @property
    def where(self) -> str:
        """`FILE:LINE`."""
        return f"{self.file}:{self.line}"


def _sources(folder: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED and not d.startswith("."))
        found += [Path(dirpath) / name for name in sorted(filenames) if name.endswith((".py", ".js"))]
    return found


def _asked_in_js(path: Path, text: str) -> list[Asked]:
    names = []
    for module, getter in JS_GETTERS.items():
        for imported in re.finditer(JS_NAMED_IMPORT.format(module=module), text):
            for part in imported.group(1).split(","):
                original, _, alias = part.strip().partition(" as ")
                if original.strip() == getter:
                    names.append((alias or original).strip())
        names += [
            f"{found.group(1)}.{getter}" for found in re.finditer(JS_NAMESPACE_IMPORT.format(module=module), text)
        ]
    calls = [call for name in names for call in re.finditer(JS_GET.format(name=re.escape(name)), text)]
    return [Asked(call.group(2), path, text.count("\n", 0, call.start()) + 1) for call in calls]


GETTERS: Final = frozenset(
    {
        "agentlib.get",
        "agentlib.tooling",
        "agentlib.calls.get",
        "wit_world.imports.tooling.get",
    }
)
"""The functions (by qualified name) whose first argument, a string literal, names a tooling."""

_TOOLING_MODULE: Final = "wit_world.imports.tooling"


def _imported(tree: ast.Module) -> dict[str, str]:
    """Local name -> the qualified name it was imported as, for every import of the module."""
    names: dict[str, str] = {"tooling": _TOOLING_MODULE}  # the raw WIT module, as the templates import it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _qualified(node: ast.expr, names: dict[str, str]) -> str | None:
    """The qualified name `node` (a name or a chain of attributes) refers to, by the module's imports."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _qualified(node.value, names)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _asked_in(path: Path) -> list[Asked]:
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return []
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".js":
            return _asked_in_js(path, text)
        tree = ast.parse(text, filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return []
    names = _imported(tree)
    asked = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and _qualified(node.func, names) in GETTERS:
            asked.append(Asked(first.value, path, node.lineno))
    return asked


def toolings_asked(folder: Path) -> list[Asked]:
    """The toolings the Python sources of guest folder `folder` ask for, each once (where it is
    first asked for, by file and line), in name order; [] for a file (a `.wasm`)."""
    if not folder.is_dir():
        return []
    first: dict[str, Asked] = {}
    for path in _sources(folder):
        for asked in sorted(_asked_in(path), key=lambda a: a.line):
            first.setdefault(asked.tooling, asked)
    return [first[name] for name in sorted(first)]
