"""Test modules read without the issue tracker: each opens with a docstring saying what it covers,
names no issue (the changelog and git history keep those), and takes shared helpers from
`tests/support/`, never from another test module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"\bissues?\b[: ]*#?\d+", re.IGNORECASE)
"""A reference to the tracker: "issue 12", "issues #3"."""


def module_paths() -> list[Path]:
    return sorted(path for path in TESTS.rglob("test_*.py") if "node_modules" not in path.parts)


def test_every_test_module_says_what_it_covers_without_naming_an_issue() -> None:
    missing, naming = [], []
    for path in module_paths():
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not docstring or len(docstring.split()) < 5:
            missing.append(path.relative_to(TESTS).as_posix())
        elif ISSUE.search(docstring):
            naming.append(path.relative_to(TESTS).as_posix())
    assert len(module_paths()) > 100
    assert not missing, f"test modules without a docstring saying what they cover: {missing}"
    assert not naming, f"test module docstrings naming an issue: {naming}"


def test_no_test_module_imports_another() -> None:
    found = []
    for path in module_paths():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.name}: {name}" for name in names if name.split(".")[-1].startswith("test_")]
    assert not found, f"import helpers from tests/support instead: {found}"
