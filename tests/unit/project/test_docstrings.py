"""Module docstrings stay short: a module's responsibility and invariants, not its methods' contracts.

A host module's docstring holds at most `MAX_LINES` lines; contracts of methods go on the methods. A
module may exceed `MAX_LINES` only when its docstring says why, with `Longer:` followed by the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

HOST = Path(__file__).resolve().parents[3] / "host"

MAX_LINES = 12
"""Most lines of a module docstring (as `ast.get_docstring` cleans it) without a `Longer:` reason."""

REASON = re.compile(r"Longer:[ \t]*\S")

# Known exceptions, to be shortened; remove each entry once its module is short. Paths are relative
# to host/. Empty now: every module keeps to the rule.
PENDING: frozenset[str] = frozenset()


def _docstring_lines() -> dict[str, int]:
    """Lines of each host module's docstring, by path relative to host/, for modules without a reason."""
    found = {}
    for path in sorted(HOST.rglob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if docstring is not None and not REASON.search(docstring):
            found[path.relative_to(HOST).as_posix()] = len(docstring.splitlines())
    return found


def test_module_docstrings_are_short() -> None:
    long = {name: count for name, count in _docstring_lines().items() if count > MAX_LINES and name not in PENDING}
    assert not long, (
        f"module docstrings longer than {MAX_LINES} lines: {long}; move the contracts of functions and "
        "methods onto them, or say why with `Longer: <reason>` in the docstring"
    )


def test_pending_modules_are_still_long() -> None:
    lines = _docstring_lines()
    done = sorted(name for name in PENDING if lines.get(name, 0) <= MAX_LINES)
    assert not done, f"{done} no longer need an exception: remove them from PENDING"


def test_a_reason_allows_a_longer_docstring() -> None:
    assert REASON.search("Summary.\n\nLonger: the table of every WIT form is the point of this module.")
    assert not REASON.search("Summary.\n\nLonger:\n")
