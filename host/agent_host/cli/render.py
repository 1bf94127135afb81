"""Everything the command line shows, drawn with rich: results on stdout, the rest on stderr.

- stdout carries exactly the result: a guest's answer byte for byte (a final newline added only on
  a terminal), JSON, tables, paths; off a terminal tables are plain columns, never wrapped. Under
  `--json` it holds one JSON document however the command ends (see `json_missing`).
- stderr carries notes (`agent-host: ...`, hidden by `-q`), problems, errors (`agent-host: error:
  ...` with the hint lines) and progress: a live line with the elapsed time on a terminal, the
  start and end lines elsewhere (`agent_host._support.progress`), nothing with `-q`.
- Colour only on a terminal; `NO_COLOR` is honoured (rich). Text is never read as markup.
Consoles are made per call on the streams as they are then (tests and live displays swap them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TextIO

from agent_host._support import progress
from agent_host._support.printable import printable

if TYPE_CHECKING:
    from rich.console import Console

STYLES: Final = {
    "ok": "green",
    "ok:": "green",
    "error": "yellow",
    "trap": "red",
    "diverged": "magenta",
    "stopped:": "bold yellow",
    "error:": "bold red",
    "problem:": "bold red",
    "hint:": "cyan",
    "warning:": "yellow",
}
"""Styles of words a person scans for (used on a terminal only)."""

_quiet = False
_json_wanted = False
_json_printed = False


def setup(*, quiet: bool) -> None:
    """Choose the progress display (none when quiet, live on a terminal, lines otherwise)."""
    global _quiet
    _quiet = quiet
    if quiet:
        progress.set_display(_Silent())
    elif sys.stderr.isatty():
        progress.set_display(_RichDisplay())
    else:
        progress.set_display(progress.LineDisplay())


def console(stream: TextIO) -> Console:
    """A console on `stream`: colour only when it is a terminal (and NO_COLOR is unset), no
    wrapping, no markup, no guessing of highlights."""
    from rich.console import Console

    return Console(file=stream, soft_wrap=True, markup=False, highlight=False, emoji=False)


def answer(text: str) -> None:
    """A guest's answer on stdout, exactly (a final newline only on a terminal)."""
    sys.stdout.write(text)
    if sys.stdout.isatty() and not text.endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()


def line(text: str) -> None:
    """One plain line on stdout (a path, a status line)."""
    sys.stdout.write(f"{text}\n")
    sys.stdout.flush()


def json_out(value: Any) -> None:
    """`value` as indented JSON on stdout (coloured on a terminal)."""
    global _json_printed
    _json_printed = True
    text = json.dumps(value, indent=2, ensure_ascii=False)
    if sys.stdout.isatty():
        from rich.json import JSON

        console(sys.stdout).print(JSON(text, indent=2, ensure_ascii=False))
    else:
        line(text)


def expect_json(wanted: bool) -> None:
    """Whether this command line asked for JSON (`--json`), so that however it ends, stdout holds
    one document (see `json_missing`). Called at the start of each command line: a second `main()`
    in one process starts with no document printed."""
    global _json_wanted, _json_printed
    _json_wanted = wanted
    _json_printed = False


def json_missing() -> bool:
    """Whether the command line asked for JSON and no document was printed yet."""
    return _json_wanted and not _json_printed


def error_document(code: str, message: str, data: str | None = None) -> dict[str, Any]:
    """The document `--json` prints for a command that failed before it printed its own: `code` is
    a WIT `error-code` for a tooling's failure, else the host error's reference (`config-error`,
    `usage-error`, `interrupted`, ...)."""
    return {"error": {"code": code, "message": message, "data": data}}


def note(text: str) -> None:
    """`agent-host: text` on stderr, unless `-q`."""
    if not _quiet:
        _stderr(f"agent-host: {text}")


def report(text: str) -> None:
    """`agent-host: text` on stderr, also with `-q` (how a run ended)."""
    _stderr(f"agent-host: {text}")


def problem(text: str) -> None:
    """`agent-host: problem: text` on stderr."""
    _stderr(f"agent-host: problem: {text}")


def hint(text: str) -> None:
    """`  hint: text` on stderr (advice following the line it is about)."""
    _stderr(f"  hint: {text}")


def error(message: str, *, kind: str = "error") -> None:
    """`agent-host: KIND: message` on stderr (`message` may hold `  hint:` lines)."""
    _stderr(f"agent-host: {kind}: {message}")


def _stderr(text: str) -> None:
    out = sys.stderr
    if not out.isatty():
        out.write(f"{text}\n")
        out.flush()
        return
    from rich.text import Text

    styled = Text(text)
    for word, style in STYLES.items():
        if word.endswith(":"):
            styled.highlight_words([f" {word}"], style)
    console(out).print(styled)


@dataclass(frozen=True)
class Column:
    """A table column: its header, `right`-aligned or not, styled by value (`STYLES`) or not."""

    header: str
    right: bool = False
    styled: bool = False


def table(columns: Sequence[Column], rows: Sequence[Sequence[str]], *, title: str | None = None) -> None:
    """A table on stdout: boxed and coloured on a terminal, plain columns otherwise."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out = console(sys.stdout)
    terminal = out.is_terminal
    grid = Table(
        box=box.SIMPLE_HEAD if terminal else None,
        show_edge=False,
        pad_edge=False,
        header_style="bold" if terminal else "",
        title=None,
    )
    for column in columns:
        grid.add_column(column.header, justify="right" if column.right else "left", no_wrap=not terminal)
    for row in rows:
        cells = zip(columns, row, strict=True)
        grid.add_row(*(Text(cell, style=STYLES.get(cell, "") if column.styled else "") for column, cell in cells))
    if title is not None:
        line(title)
    if terminal:
        out.print(grid)
        return
    out.width = 1 << 16  # never wrap or cut a row off a terminal
    with out.capture() as captured:
        out.print(grid)
    for text in captured.get().splitlines():
        line(text.rstrip())


def one_line(text: str | None, width: int = 90) -> str:
    """The first line of `text`, cut to `width` characters with `...`."""
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return printable(first if len(first) <= width else first[: width - 3] + "...")


def size(count: int) -> str:
    """`1.5 GiB`, `64 MiB`, `512 B`: bytes as a person reads them."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= factor:
            return f"{count / factor:.1f} {unit}"
    return f"{count} B"


class _Silent:
    """No progress at all (`-q`)."""

    def begin(self, what: str) -> progress.Step:
        return self

    def end(self, outcome: str, elapsed: float) -> None:
        pass


class _RichDisplay:
    """A live line on the terminal: spinner, elapsed time, the step; then the end line. A step
    that begins while another is shown is shown as plain lines."""

    def __init__(self) -> None:
        self._busy = False

    def begin(self, what: str) -> progress.Step:
        if self._busy:
            return progress.LineDisplay().begin(what)
        self._busy = True
        return _RichStep(self, what)

    def done(self) -> None:
        self._busy = False


class _RichStep:
    def __init__(self, display: _RichDisplay, what: str) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self._display, self._what = display, what
        self._console = console(sys.stderr)
        self._live = Progress(
            SpinnerColumn(),
            TimeElapsedColumn(),
            TextColumn(f"agent-host: {what} ...", markup=False),
            console=self._console,
            transient=True,
            redirect_stdout=False,
        )
        self._live.add_task(what, total=None)
        self._live.start()

    def end(self, outcome: str, elapsed: float) -> None:
        self._live.stop()
        self._display.done()
        from rich.text import Text

        style = "green" if outcome == "done in" else "yellow"
        self._console.print(Text(f"agent-host: {self._what}: ") + Text(f"{outcome} {elapsed:.1f} s", style=style))
