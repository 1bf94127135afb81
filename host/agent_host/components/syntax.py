"""A Python guest's syntax, checked before componentize-py starts (it says it after ~10 s) and
before a dev run: `check_syntax` compiles every `.py` file a build is made of (`build.source_files`:
no caches, bindings or hidden folders), each read as Python reads a source (UTF-8 unless declared),
and raises `BuildError` for the first error: file (relative to the folder), line, column, message,
the source line and a caret. Nothing of the guest runs.

The guest's Python judges, never another (an older one refuses newer syntax, `type X = int`; a
newer one accepts what the guest's refuses): the host's `compile()` when the host runs CPython
`build.GUEST_PYTHON` (3.14 for componentize-py 0.25.1), else the dev runner (the guest's CPython,
sandboxed, no grant) when the cache holds it, ~0.1 s. Without it nothing is checked (not worth
building the runner, ~40 s once): componentize-py reports the error as before. A check that cannot
conclude is logged and lets the build or dev run go on, which then judges.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import sys
import threading
import tokenize
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from agent_host.components.build import GUEST_PYTHON, source_files
from agent_host.components.dev_runner import CHECK_VARIABLE, built_runner
from agent_host.errors import BuildError

logger = logging.getLogger(__name__)

CHECK_AGENT: Final = "syntax-check"
"""The agent name the dev runner's check runs under (in its limits' messages)."""

_COMPILED_MAX: Final = 20_000
"""Texts `_compiled` remembers at most (32 bytes each); past it, it starts again."""

_compiled: set[bytes] = set()
"""sha256 of the source texts that compiled with the guest's Python in this process."""
_compiled_lock = threading.Lock()


@dataclass(frozen=True)
class SyntaxProblem:
    """A `SyntaxError` (or `IndentationError`, `TabError`: `kind`) as Python raised it: its fields."""

    kind: str
    msg: str
    filename: str
    lineno: int | None = None
    offset: int | None = None
    end_lineno: int | None = None
    end_offset: int | None = None
    text: str | None = None

    @classmethod
    def of(cls, error: SyntaxError, filename: str) -> SyntaxProblem:
        return cls(
            type(error).__name__,
            str(error.msg),
            filename,
            error.lineno,
            error.offset,
            error.end_lineno,
            error.end_offset,
            error.text,
        )

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> SyntaxProblem:
        """From the dev runner's answer (`dev_runner.CHECK_VARIABLE`)."""

        def number(key: str) -> int | None:
            value = fields.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        text = fields.get("text")
        return cls(
            str(fields.get("kind") or "SyntaxError"),
            str(fields.get("msg") or "invalid syntax"),
            str(fields.get("filename")),
            number("lineno"),
            number("offset"),
            number("end_lineno"),
            number("end_offset"),
            text if isinstance(text, str) else None,
        )

    def describe(self, folder: Path) -> str:
        """`FILE:LINE:COLUMN: KIND: MESSAGE (guest FOLDER)`, then the source line and a caret under
        the error (as Python's traceback draws them)."""
        where = self.filename + "".join(f":{n}" for n in (self.lineno, self.offset) if n)
        lines = [f"{where}: {self.kind}: {self.msg} (guest {folder})"]
        source = (self.text or "").split("\n")[0].rstrip("\r")
        shown = source.lstrip(" \f")
        if shown:
            lines.append(f"    {shown}")
            if self.offset:
                start = max(0, self.offset - 1 - (len(source) - len(shown)))
                end = start + 1
                if self.end_offset and self.end_lineno in (None, self.lineno):
                    end = max(end, self.end_offset - 1 - (len(source) - len(shown)))
                lines.append("    " + " " * start + "^" * (end - start))
        return "\n".join(lines)


def check_syntax(folder: Path) -> None:
    """Raise `BuildError` for the first syntax error of the `.py` files of guest folder `folder`
    (see the module), or for one that is not text in its encoding; nothing when they compile, or
    when no exact check is at hand."""
    folder = folder.resolve()
    problem = first_problem(guest_sources(folder))
    if problem is not None:
        raise BuildError(problem.describe(folder))


def guest_sources(folder: Path) -> dict[str, str]:
    """The `.py` files of guest folder `folder`, relative path -> text, in the build's order. Raises
    `BuildError` for a file that is not text in its encoding (UTF-8 unless declared)."""
    sources: dict[str, str] = {}
    for path in source_files(folder):
        if path.suffix == ".py":
            name = path.relative_to(folder).as_posix()
            sources[name] = _decoded(name, path.read_bytes(), folder)
    return sources


def _decoded(name: str, data: bytes, folder: Path) -> str:
    """`data`, the bytes of file `name`, decoded as Python decodes a source file."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        declared = None
    except SyntaxError as error:  # an encoding Python does not know, one against a BOM, or bytes not UTF-8
        encoding, declared = "utf-8", error
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        what = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else f"{encoding} (as its coding declaration says)"
        raise BuildError(
            f"{name}:{line}:{column}: not {what} text: byte 0x{data[error.start]:02x} (guest {folder})",
            hint="save it as UTF-8: Python reads a source file as UTF-8 unless its first or second line "
            "declares another encoding (# -*- coding: NAME -*-)",
        ) from None
    if declared is not None:
        raise BuildError(SyntaxProblem.of(declared, name).describe(folder))
    return text


def first_problem(sources: Mapping[str, str]) -> SyntaxProblem | None:
    """The first syntax error of `sources` (path -> text) as the guest's Python sees it; None when
    they compile, or when no exact check is at hand (see the module). A text this process saw
    compile is not compiled again (`_compiled`: a save in watch mode compiles the file saved)."""
    digests = {name: hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest() for name, text in sources.items()}
    with _compiled_lock:
        todo = {name: text for name, text in sources.items() if digests[name] not in _compiled}
    if not todo:
        return None
    if GUEST_PYTHON is not None and sys.version_info[:2] == GUEST_PYTHON:
        problem = host_problem(todo)
    elif (runner := built_runner()) is not None:
        problem = runner_problem(todo, runner)
    else:
        return None
    names = list(todo)
    good = names[: names.index(problem.filename)] if problem is not None and problem.filename in todo else names
    with _compiled_lock:
        if len(_compiled) + len(good) > _COMPILED_MAX:
            _compiled.clear()
        _compiled.update(digests[name] for name in good)
    return problem


def host_problem(sources: Mapping[str, str]) -> SyntaxProblem | None:
    """The first syntax error of `sources` compiled by this host's Python (exact only when it is the
    guest's version). Its warnings (`SyntaxWarning`: an invalid escape) are not shown, nor turned
    into errors by a `-W error` of the host's (`warnings.catch_warnings`: the process's filters, for
    the moment of each compile)."""
    for name, text in sources.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(text, name, "exec", dont_inherit=True)
        except SyntaxError as error:
            return SyntaxProblem.of(error, name)
    return None


def runner_problem(sources: Mapping[str, str], runner: Path) -> SyntaxProblem | None:
    """The first syntax error of `sources` compiled by the dev runner (`runner`, its component),
    run in a runtime of its own with no grant; None when they compile or the check did not conclude
    (logged)."""
    from agent_host._support.paths import cache_dir
    from agent_host.config import Config
    from agent_host.model import RunStatus
    from agent_host.policy.grants import AgentPolicy
    from agent_host.runtime.engine import Runtime
    from agent_host.runtime.guest import run_alone

    policy = replace(AgentPolicy.resolve(Config(), CHECK_AGENT), env={CHECK_VARIABLE: "1"})
    try:
        with Runtime(cache_dir()) as runtime:
            status, text = run_alone(runtime, runtime.load(runner), json.dumps(sources), policy, CHECK_AGENT)
    except Exception as exc:  # the check is a shortcut: without it, componentize-py (or the dev run) judges
        logger.warning("the syntax check did not run (%s: %s); going on without it", type(exc).__name__, exc)
        return None
    if status != RunStatus.OK:
        logger.warning("the syntax check did not conclude (%s: %s); going on without it", status, text)
        return None
    found = json.loads(text)
    return SyntaxProblem.from_json(found) if isinstance(found, dict) else None
