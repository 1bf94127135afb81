"""The syntax check before a build, without a build: which files it reads and how, how an error is
told (file, line, column, the source line and a caret), and which Python judges.

The host's own `compile()` judges only when the host runs the guest's Python version; otherwise
the dev runner does, and without it nothing is checked. A text that compiled is not compiled again.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from agent_host.components import syntax
from agent_host.components.syntax import SyntaxProblem, first_problem, guest_sources, host_problem
from agent_host.errors import BuildError


def test_an_error_is_told_with_its_place_the_line_and_a_caret_under_it() -> None:
    problem = SyntaxProblem("SyntaxError", "invalid syntax", "app.py", 6, 23, 6, 23, "        return input +\n")
    assert problem.describe(Path("/g")) == (
        "app.py:6:23: SyntaxError: invalid syntax (guest /g)\n    return input +\n                  ^"
    )


def test_a_range_on_one_line_is_underlined_whole() -> None:
    problem = SyntaxProblem("SyntaxError", "cannot assign to literal", "pkg/m.py", 2, 5, 2, 8, "    12 = x\n")
    assert problem.describe(Path("/g")).splitlines()[1:] == ["    12 = x", "    ^^^"]


def test_an_error_without_a_line_or_column_names_what_it_has() -> None:
    assert SyntaxProblem("SyntaxError", "unknown encoding: nope", "app.py").describe(Path("/g")) == (
        "app.py: SyntaxError: unknown encoding: nope (guest /g)"
    )
    problem = SyntaxProblem("IndentationError", "unexpected indent", "app.py", 3, None, None, None, "  x\n")
    assert problem.describe(Path("/g")).splitlines() == [
        "app.py:3: IndentationError: unexpected indent (guest /g)",
        "    x",
    ]


def guest(tmp_path: Path, files: Mapping[str, bytes]) -> Path:
    folder = tmp_path / "guest"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def test_the_python_files_of_the_build_are_read_and_caches_bindings_and_hidden_folders_are_not(
    tmp_path: Path,
) -> None:
    broken = b"def (:\n"
    folder = guest(
        tmp_path,
        {
            "app.py": b"x = 1\n",
            "pkg/__init__.py": b"",
            "pkg/helper.py": b"y = 2\n",
            "notes.txt": broken,
            "types.pyi": broken,
            "__pycache__/app.py": broken,
            "wit_world/__init__.py": broken,
            ".venv/lib.py": broken,
            "node_modules/x.py": broken,
        },
    )
    assert guest_sources(folder) == {"app.py": "x = 1\n", "pkg/__init__.py": "", "pkg/helper.py": "y = 2\n"}


def test_a_file_that_is_not_utf8_is_named_with_the_place_of_its_first_bad_byte(tmp_path: Path) -> None:
    folder = guest(tmp_path, {"app.py": b"import helper\n", "helper.py": b'A = 1\nNAME = "caf\xe9"\n'})
    with pytest.raises(BuildError) as raised:
        guest_sources(folder)
    assert raised.value.message == f"helper.py:2:12: not UTF-8 text: byte 0xe9 (guest {folder})"
    assert raised.value.hint is not None and "save it as UTF-8" in raised.value.hint


def test_a_declared_encoding_and_a_bom_are_read_as_python_reads_them(tmp_path: Path) -> None:
    folder = guest(
        tmp_path,
        {"app.py": b'# -*- coding: latin-1 -*-\nNAME = "caf\xe9"\n', "bom.py": b"\xef\xbb\xbfX = 1\n"},
    )
    assert guest_sources(folder) == {"app.py": '# -*- coding: latin-1 -*-\nNAME = "caf\xe9"\n', "bom.py": "X = 1\n"}


def test_an_unknown_declared_encoding_is_a_syntax_error_of_that_file(tmp_path: Path) -> None:
    folder = guest(tmp_path, {"app.py": b"# coding: no-such-codec\nX = 1\n"})
    with pytest.raises(BuildError, match=r"^app\.py: SyntaxError: unknown encoding"):
        guest_sources(folder)


def test_the_hosts_compile_reports_the_first_error_in_order_and_no_warning() -> None:
    """`filterwarnings = error` (pyproject) would make the invalid escape's warning an error."""
    found = host_problem({"a.py": 'PATTERN = "\\d"\n', "b.py": "def f(:\n", "c.py": "(\n"})
    assert found is not None
    assert (found.filename, found.lineno, found.kind) == ("b.py", 1, "SyntaxError")


def test_the_host_judges_only_when_it_runs_the_guests_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "_compiled", set())
    monkeypatch.setattr(syntax, "built_runner", lambda: None)
    monkeypatch.setattr(syntax, "GUEST_PYTHON", (sys.version_info.major, sys.version_info.minor + 1))
    assert first_problem({"app.py": "def f(:\n"}) is None  # no exact judge at hand: componentize-py's turn
    monkeypatch.setattr(syntax, "GUEST_PYTHON", sys.version_info[:2])
    found = first_problem({"app.py": "def f(:\n"})
    assert found is not None and found.filename == "app.py"


def test_a_text_that_compiled_is_not_compiled_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "_compiled", set())
    monkeypatch.setattr(syntax, "GUEST_PYTHON", sys.version_info[:2])
    compiled: list[list[str]] = []

    def spy(sources: Mapping[str, str]) -> SyntaxProblem | None:
        compiled.append(list(sources))
        return host_problem(sources)

    monkeypatch.setattr(syntax, "host_problem", spy)
    assert first_problem({"app.py": "x = 1\n", "b.py": "def f(:\n", "c.py": "y = 2\n"}) is not None
    assert first_problem({"app.py": "x = 1\n", "b.py": "def f(): pass\n", "c.py": "y = 2\n"}) is None
    assert first_problem({"app.py": "x = 1\n", "b.py": "def f(): pass\n", "c.py": "y = 2\n"}) is None
    assert compiled == [["app.py", "b.py", "c.py"], ["b.py", "c.py"]]
