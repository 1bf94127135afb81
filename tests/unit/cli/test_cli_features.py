"""The command line's newer surface: lazy imports, --version, -q, key=value arguments, --json.

`--help`, `--version`, `new`, `config` and `wit` import neither wasmtime nor mcp; `--json` on tools,
call, run and config check; `call TOOLING TOOL key=value ...` with values parsed as JSON when they
parse; argument names in the `tools` table; progress with only start and end lines off a terminal.
"""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from agent_host import __version__
from agent_host._support import progress
from agent_host.cli import main
from agent_host.cli.call import arguments_json, parse_value
from agent_host.cli.tools import argument_names
from agent_host.errors import Interrupted, UsageError
from tests.support import cli_process

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.real_processes  # its subject: a process of its own
def test_help_version_new_config_and_wit_import_neither_wasmtime_nor_mcp(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import contextlib, io, sys
        from agent_host.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            codes = [
                main(["--help"]), main(["--version"]), main(["run", "--help"]), main(["tools", "--help"]),
                main(["new", "scout", "--dir", {str(tmp_path / "guests")!r}]),
                main(["config", "init", {str(tmp_path / "agent-host.toml")!r}]),
                main(["config", "check", {str(tmp_path / "agent-host.toml")!r}]),
                main(["wit"]), main(["wit", "--path"]),
            ]
        assert codes == [0] * 9, (codes, out.getvalue())
        heavy = sorted({{name.split(".")[0] for name in sys.modules}} & {{"wasmtime", "mcp"}})
        print(heavy)
        """
    )
    done = cli_process.run(code=script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_version_names_the_host_and_its_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"agent-host {__version__} (wasmtime 50.0.1, componentize-py ")
    assert "mcp " in out and "Python 3." in out


def test_a_bare_agent_host_shows_the_help_on_stderr_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Commands:" in captured.err and "run" in captured.err


def test_an_unknown_option_is_a_usage_error_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "agent-host: error: No such option" in err and "--frobnicate" in err
    assert "hint: see 'agent-host run --help'" in err


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ((), {}),
        (("a=2", "b=3"), {"a": 2, "b": 3}),
        (("text=hello world",), {"text": "hello world"}),
        (('n="5"', "flag=true", "none=null", "list=[1, 2]", 'obj={"k": 1}'), {"n": "5", "flag": True, "none": None,
                                                                               "list": [1, 2], "obj": {"k": 1}}),
        (("expr=a=b",), {"expr": "a=b"}),
        (("empty=",), {"empty": ""}),
        (("x=NaN",), {"x": "NaN"}),
        (('{"a": 1}',), {"a": 1}),
    ],
)  # fmt: skip
def test_call_arguments_are_json_or_key_value_pairs(items: tuple[str, ...], expected: object) -> None:
    assert json.loads(arguments_json(items, io.StringIO())) == expected


def test_call_arguments_come_from_stdin_with_a_dash_and_a_single_text_is_passed_on() -> None:
    assert arguments_json(["-"], io.StringIO('{"a": 1}')) == '{"a": 1}'
    assert arguments_json(["[1]"], io.StringIO()) == "[1]"  # the session says what is wrong with it


@pytest.mark.parametrize(("items", "message"), [(("a=1", "b"), "'b': expected KEY=VALUE"),
                                                (("a=1", "a=2"), "'a' given twice"),
                                                (("=1", "b=2"), "'=1': expected KEY=VALUE")])  # fmt: skip
def test_malformed_key_value_arguments_are_usage_errors(items: tuple[str, ...], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        arguments_json(items, io.StringIO())


def test_a_value_is_json_when_it_parses_and_a_string_otherwise() -> None:
    assert parse_value("5") == 5 and parse_value("5.5") == 5.5 and parse_value('"5"') == "5"
    assert parse_value("hello") == "hello" and parse_value("Infinity") == "Infinity"


def test_call_with_key_value_pairs_calls_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "demo", "add", "a=2", "b=3"]) == 0
    assert json.loads(capsys.readouterr().out)["structuredContent"] == {"sum": 5}


def test_call_json_prints_a_failure_without_result_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "demo", "nosuch", "--json"]) == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)["error"]
    assert error["code"] == "not-found" and "has no tool 'nosuch'" in error["message"]
    assert "agent-host: error: not-found:" in captured.err
    assert main(["call", "demo", "fail", "message=nope", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["isError"] is True


def test_call_json_prints_an_argument_mistake_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    """`call ... a=1 a=2 --json` prints its argument mistake as JSON on stdout, not nothing."""
    assert main(["call", "demo", "add", "a=1", "a=2", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error == {"code": "invalid-arguments", "message": "argument 'a' given twice", "data": None}


def test_tools_lists_argument_names_with_the_optional_ones_in_brackets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "demo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("demo (") and lines[1].split() == ["TOOL", "ARGUMENTS", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert "  a, b  " in rows["add"] and "[message]" in rows["fail"]


def test_argument_names_follow_the_schema() -> None:
    schema = {"properties": {"a": {}, "b": {}, "c": {}}, "required": ["a", "c"]}
    assert argument_names(schema) == "a, [b], c"
    assert argument_names({}) == "" and argument_names({"properties": []}) == ""


def test_run_json_reports_a_guest_that_cannot_start_as_an_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path / "missing"), "--json"]) == 2
    captured = capsys.readouterr()
    outcome = json.loads(captured.out)
    assert outcome["agent"] == "missing" and outcome["status"] == "build-error" and outcome["exit_code"] == 2
    assert "no such guest folder or .wasm file" in outcome["output"]
    assert set(outcome) == {"agent", "status", "exit_code", "duration", "output", "usage"}
    assert "agent-host: error: agent missing:" in captured.err


def test_config_check_json_lists_the_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "agent-host.toml"
    target.write_text('[agents.gone]\ncomponent = "guests/gone"\n')
    assert main(["config", "check", str(target), "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is False and result["agents"] == ["gone"] and result["connected"] is None
    assert "[agents.gone] component:" in result["problems"][0]
    target.write_text("[tooling.x\n")
    assert main(["config", "check", str(target), "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is False and "invalid TOML" in result["problems"][0]


def test_quiet_hides_notes_but_not_results_or_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "new", "scout", "--dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(tmp_path / "scout") and captured.err == ""
    assert main(["new", "scout", "--dir", str(tmp_path), "--quiet"]) == 2
    assert "already exists" in capsys.readouterr().err


def test_options_are_taken_before_and_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[tooling.t]\ncommand = "x"\n[agents.alpha]\ncomponent = "a.wasm"\n')
    for argv in (
        ["--config", str(config), "run", "--agent", "beta"],
        ["run", "--agent", "beta", "--config", str(config)],
    ):
        assert main(argv) == 2
        assert "defined agents: alpha" in capsys.readouterr().err


def test_progress_off_a_terminal_prints_the_start_and_the_end_line_only() -> None:
    stream = io.StringIO()
    with progress.progress("building x", stream):
        pass
    start, end = stream.getvalue().splitlines()
    assert start == "agent-host: building x ..."
    assert end.startswith("agent-host: building x: done in ") and end.endswith(" s")
    for failure, outcome in ((Interrupted("stop"), "stopped after"), (RuntimeError("x"), "failed after")):
        stream = io.StringIO()
        with pytest.raises(type(failure)), progress.progress("compiling y", stream):
            raise failure
        assert f"agent-host: compiling y: {outcome} " in stream.getvalue()


def test_a_display_set_by_the_command_line_shows_every_step() -> None:
    seen: list[tuple[str, str]] = []

    class Recorder:
        def begin(self, what: str) -> Recorder:
            self.what = what
            return self

        def end(self, outcome: str, elapsed: float) -> None:
            seen.append((self.what, outcome))

    previous = progress.set_display(Recorder())
    try:
        with progress.progress("compiling z"):
            pass
    finally:
        progress.set_display(previous)
    assert seen == [("compiling z", "done in")]


def test_shell_completion_offers_commands_and_configured_toolings(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text('[tooling.files]\ncommand = "x"\n[tooling.fetch]\ncommand = "y"\n[agents.scout]\n')

    def complete(words: str) -> list[str]:
        env = {"COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1),
               "_AGENT_HOST_COMPLETE": "bash_complete"}  # fmt: skip
        done = cli_process.run(env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    assert complete("agent-host ca") == ["plain,cache", "plain,call"]
    assert complete("agent-host tools f") == ["plain,fetch", "plain,files"]
    assert complete("agent-host run --agent s") == ["plain,scout"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_host.cli import render

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for stream, coloured in ((io.StringIO(), False), (_Terminal(), True)):
        monkeypatch.setattr("sys.stderr", stream)
        render.error("[agents.x] broke\n  hint: fix it")
        text = stream.getvalue()
        assert ("\x1b[" in text) is coloured
        assert "[agents.x] broke" in text  # never read as markup
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    render.error("plain")
    assert "31m" not in terminal.getvalue() and "plain" in terminal.getvalue()


def test_the_console_script_exits_at_once_with_its_code_and_all_its_output() -> None:
    """`entry` skips the interpreter's teardown (~0.1 s a command) but loses no output."""
    script = (
        "import atexit, sys; atexit.register(lambda: print('teardown ran'));"
        "sys.argv = ['agent-host', 'wit']; from agent_host.cli import entry; entry()"
    )
    done = cli_process.run(code=script, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("}") and "world agent" in done.stdout
    assert "teardown ran" not in done.stdout
    failed = cli_process.run(code=script.replace("'wit'", "'run', 'no-such-guest'"), timeout=60)
    assert failed.returncode == 2 and "no such guest folder" in failed.stderr
