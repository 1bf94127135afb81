"""Forwarding a guest's output: lines cut as log lines are, and what the host holds bounded.

Output without a newline is read in bounded pieces, never held whole, a line longer than the bound is
cut saying how much was cut, and control characters are escaped.
"""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

from agent_host.policy.grants import Limit
from agent_host.runtime.output import MAX_OUTPUT_LINE, Forwarder
from agent_host.runtime.output_files import CappedFile


def forwarded(tmp_path: Path, data: bytes) -> list[str]:
    out = tmp_path / "stdout"
    out.write_bytes(data)
    sink = io.StringIO()
    Forwarder("g", [out], sink).stop()  # never started: stop() forwards what is there
    return sink.getvalue().splitlines()


def test_lines_are_forwarded_with_the_agents_prefix_and_a_last_line_without_newline(tmp_path: Path) -> None:
    assert forwarded(tmp_path, b"one\ntwo\nthree") == ["[g] one", "[g] two", "[g] three"]


def test_a_line_longer_than_the_bound_is_cut_saying_how_much_was_cut(tmp_path: Path) -> None:
    lines = forwarded(tmp_path, b"a" * (MAX_OUTPUT_LINE + 5000) + b"\nnext\n" + b"b" * (3 * MAX_OUTPUT_LINE))
    assert lines == [
        "[g] " + "a" * MAX_OUTPUT_LINE + "... [5000 bytes cut]",
        "[g] next",
        "[g] " + "b" * MAX_OUTPUT_LINE + f"... [{2 * MAX_OUTPUT_LINE} bytes cut]",
    ]


def test_output_without_newlines_is_read_in_bounded_pieces_not_held_whole(tmp_path: Path) -> None:
    size = 32 * 1024 * 1024
    out = tmp_path / "stdout"
    with out.open("wb") as handle:
        for _ in range(size // (1024 * 1024)):
            handle.write(b"x" * (1024 * 1024))
    sink = io.StringIO()
    forwarder = Forwarder("g", [out], sink)
    tracemalloc.start()
    try:
        forwarder._pump(final=False)  # while the guest runs: the line is not complete yet
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, f"the host held {peak} bytes of a guest's partial line"
    with out.open("ab") as handle:
        handle.write(b"\ndone\n")
    forwarder.stop()
    assert sink.getvalue().splitlines() == [
        "[g] " + "x" * MAX_OUTPUT_LINE + f"... [{size - MAX_OUTPUT_LINE} bytes cut]",
        "[g] done",
    ]


def test_control_characters_a_guest_prints_are_escaped_so_it_cannot_forge_host_lines(tmp_path: Path) -> None:
    """`\\r`, ESC sequences and bidi overrides in a guest's output never reach the operator's terminal
    raw (where they could rewrite a line, set the title or forge a host line)."""
    lines = forwarded(tmp_path, b"\x1b[1A\x1b[2K\ragent-host: FORGED\x1b]0;t\x07 \xe2\x80\xae!\n")
    assert lines == ["[g] \\x1b[1A\\x1b[2K\\x0dagent-host: FORGED\\x1b]0;t\\x07 \\u202e!"]


def test_a_guest_that_prints_nothing_costs_no_file_and_its_output_is_forwarded_once_it_prints(
    tmp_path: Path,
) -> None:
    """The file is made at the first write (never over one that exists), and removed when closed."""
    limit = Limit(100, "guest_output in test.toml [agents.g]")
    out = CappedFile(tmp_path / "stdout", limit, agent="g", stream="stdout")
    sink = io.StringIO()
    forwarder = Forwarder("g", [out], sink)
    forwarder._pump(final=False)
    assert not out.path.exists() and sink.getvalue() == ""
    out(b"hello\npartial")
    forwarder._pump(final=False)
    assert sink.getvalue().splitlines() == ["[g] hello"]
    out(b"x" * 200)  # past the limit: cut, with a notice in the file
    forwarder.stop()
    assert out.written == out.path.stat().st_size
    out.close()
    assert not out.path.exists()
    assert out(b"after close") == len(b"after close")  # dropped, as a full log would
    lines = sink.getvalue().splitlines()
    assert lines[1] == "[g] partial" + "x" * (100 - len("hello\npartial"))
    assert lines[-1].startswith("[g] [agent-host: stdout cut at 100 bytes (guest_output in test.toml")


def test_an_output_file_is_never_written_through_a_name_someone_made_first(tmp_path: Path) -> None:
    """A file or symlink already at the output's name is left alone: the output is dropped and logged."""
    target = tmp_path / "elsewhere"
    target.write_bytes(b"kept")
    (tmp_path / "stdout").symlink_to(target)
    out = CappedFile(tmp_path / "stdout", Limit(100, "guest_output"), agent="g", stream="stdout")
    assert out(b"hello\n") == len(b"hello\n")
    out.close()
    assert target.read_bytes() == b"kept" and out.dropped == len(b"hello\n")
