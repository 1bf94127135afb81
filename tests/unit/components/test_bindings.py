"""`agent-host bindings` and the type checkers' settings of `agent-host new`.

`bindings` writes typed stubs for `wit_world`, `componentize_py_types` and `agentlib` in one command;
`new` writes `pyrightconfig.json` and `mypy.ini` pointing at them with Python 3.14. Each test runs
componentize-py's `bindings` (well under a second); the type checkers themselves run in
tests/component/dev/test_editor_setup.py.
"""

from __future__ import annotations

import configparser
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_host._support.stopping import StopToken
from agent_host.cli import main
from agent_host.components import bindings
from agent_host.components.bindings import HEADER, STAMP, State, state, write_bindings
from agent_host.errors import BuildError, Interrupted


def jsonc(text: str) -> object:
    """pyrightconfig.json allows `//` comment lines; JSON does not."""
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def test_bindings_writes_importable_typed_stubs_of_the_world_its_types_and_agentlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "typings"
    assert main(["bindings", str(target)]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert sorted(p.name for p in target.iterdir()) == [STAMP, "agentlib", "componentize_py_types.py", "wit_world"]
    assert (target / "wit_world" / "py.typed").is_file() and (target / "agentlib" / "py.typed").is_file()
    modules = sorted(target.rglob("*.py"))
    assert target / "wit_world" / "imports" / "tooling.py" in modules
    assert all(path.read_text().startswith(HEADER) for path in modules)
    assert state(target) is State.CURRENT
    script = textwrap.dedent(
        f"""
        import sys, typing
        sys.path.insert(0, {str(target)!r})
        import agentlib, componentize_py_types, wit_world
        from wit_world.imports import inbox, log, tooling, types
        assert typing.get_type_hints(tooling.get) == {{"name": str, "return": tooling.Tooling}}
        assert typing.get_type_hints(inbox.recv)["return"] == typing.Optional[types.Envelope]
        assert issubclass(componentize_py_types.Err, Exception) and callable(agentlib.call)
        assert wit_world.__file__.startswith({str(target)!r})
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr


def test_bindings_default_to_typings_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "bindings"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "typings")
    assert state(tmp_path / "typings") is State.CURRENT


def test_bindings_replace_an_older_copy_and_leave_nothing_else_behind(tmp_path: Path) -> None:
    target = tmp_path / "typings"
    write_bindings(target)
    (target / "leftover.py").write_text("")
    (target / STAMP).write_text(json.dumps({"key": "from-an-older-wit"}))
    assert state(target) is State.STALE
    assert write_bindings(target) == target
    assert not (target / "leftover.py").exists() and state(target) is State.CURRENT
    assert [p.name for p in tmp_path.iterdir()] == ["typings"]


def test_bindings_never_replace_a_folder_they_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "typings"
    target.mkdir()
    (target / "requests.pyi").write_text("def get(url: str) -> object: ...\n")
    assert state(target) is State.FOREIGN
    assert main(["bindings", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"{target} exists and was not written by agent-host bindings" in err and "hint:" in err
    assert [p.name for p in target.iterdir()] == ["requests.pyi"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["typings"]
    (tmp_path / "a-file").write_text("")
    assert main(["bindings", str(tmp_path / "a-file")]) == 2


def test_an_empty_folder_is_taken_as_missing_and_filled(tmp_path: Path) -> None:
    target = tmp_path / "typings"
    target.mkdir()
    assert state(target) is State.MISSING and state(tmp_path / "absent") is State.MISSING
    write_bindings(target)
    assert state(target) is State.CURRENT


def test_a_failing_componentize_py_leaves_the_older_copy_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "typings"
    write_bindings(target)
    before = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    broken = tmp_path / "wit"
    broken.mkdir()
    (broken / "world.wit").write_text(
        "package agent-host:guest@0.1.0;\nworld agent { export run: func(input: strin); }\n"
    )
    monkeypatch.setattr(bindings, "wit_dir", lambda: broken)
    with pytest.raises(BuildError, match="writing bindings failed: ") as failed:
        write_bindings(target)
    assert "strin" in str(failed.value)
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["typings", "wit"]


def test_a_stop_request_writes_nothing(tmp_path: Path) -> None:
    token = StopToken()
    token.stop("SIGINT received", 2)
    with pytest.raises(Interrupted, match="not done, SIGINT received") as stopped:
        write_bindings(tmp_path / "typings", stop=token)
    assert stopped.value.exit_code == 130
    assert list(tmp_path.iterdir()) == []


def test_new_points_pyright_and_mypy_at_the_bindings_as_python_3_14(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "scout"]) == 0
    assert "write the bindings: agent-host bindings\n" in capsys.readouterr().err
    folder = tmp_path / "guests" / "scout"
    pyright = jsonc((folder / "pyrightconfig.json").read_text())
    assert isinstance(pyright, dict) and pyright["pythonVersion"] == "3.14"
    assert [(folder / path).resolve() for path in pyright["extraPaths"]] == [tmp_path / "typings"]
    mypy = configparser.ConfigParser()
    mypy.read(folder / "mypy.ini")
    assert mypy["mypy"]["python_version"] == "3.14"
    mypy_path = mypy["mypy"]["mypy_path"]
    assert mypy_path.startswith("$MYPY_CONFIG_FILE_DIR/")
    assert (folder / mypy_path.removeprefix("$MYPY_CONFIG_FILE_DIR/")).resolve() == tmp_path / "typings"
    assert main(["bindings"]) == 0
    capsys.readouterr()
    assert main(["new", "second"]) == 0
    assert "bindings" not in capsys.readouterr().err  # current: nothing to say


def test_new_with_another_bindings_folder_points_there_and_names_it_in_the_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", "scout", "--dir", str(tmp_path / "agents"), "--bindings", str(tmp_path / "my stubs")]) == 0
    assert f"agent-host bindings '{tmp_path / 'my stubs'}'" in capsys.readouterr().err
    folder = tmp_path / "agents" / "scout"
    pyright = jsonc((folder / "pyrightconfig.json").read_text())
    assert isinstance(pyright, dict) and pyright["extraPaths"] == ["../../my stubs"]
    write_bindings(tmp_path / "my stubs")
    (tmp_path / "my stubs" / STAMP).write_text("{}")
    assert main(["new", "other", "--dir", str(tmp_path / "agents"), "--bindings", str(tmp_path / "my stubs")]) == 0
    assert "are out of date; write them again" in capsys.readouterr().err


@pytest.mark.real_processes  # its subject: a process of its own
def test_bindings_and_new_import_neither_wasmtime_nor_mcp(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import contextlib, io, sys
        from agent_host.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            codes = [main(["bindings", "--help"]), main(["bindings", "typings"]), main(["new", "scout"])]
        assert codes == [0, 0, 0], (codes, out.getvalue())
        print(sorted({name.split(".")[0] for name in sys.modules} & {"wasmtime", "mcp"}))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_bindings_help_names_the_default_folder_and_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bindings", "--help"]) == 0
    out = capsys.readouterr().out
    assert "default: ./typings" in out and "exit codes: 0 ok" in out
    assert main(["--help"]) == 0
    assert "bindings  Write typed bindings for editors and type checkers." in capsys.readouterr().out
