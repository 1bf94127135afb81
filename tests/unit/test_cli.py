"""The command line without guests: config init/check, wit, usage errors and their exit codes.

Provenance: issue 2, point 6 (`config init|check`, `wit`, `--help` for each, the design's exit codes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from host.cli import main


def test_config_init_writes_a_file_that_config_check_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "agent-host.toml"
    assert main(["config", "init", str(target)]) == 0
    assert target.read_text().startswith("# agent-host configuration")
    assert main(["config", "check", str(target)]) == 0
    assert f"{target}: OK: toolings: demo; agents: demo" in capsys.readouterr().out


def test_config_init_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "agent-host.toml"
    target.write_text("# mine\n")
    assert main(["config", "init", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert target.read_text() == "# mine\n"


def test_config_check_reports_a_malformed_file_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[tooling.x]\ncommand = "srv"\nretries = 3\n')
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"agent-host: error: {bad}: tooling.x.retries: unknown key" in err
    assert "hint: known keys here:" in err


def test_a_malformed_config_stops_every_command_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[tooling.x\n")
    for argv in (
        ["--config", str(bad), "tools"],
        ["tools", "--config", str(bad)],
        ["--config", str(bad), "call", "x", "y"],
    ):
        assert main(argv) == 2
        assert "invalid TOML" in capsys.readouterr().err


def test_wit_prints_the_package_and_its_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wit"]) == 0
    out = capsys.readouterr().out
    assert "package agent-host:guest@0.1.0;" in out
    assert "call-tool-blocking: func(name: string, arguments: string) -> result<tool-result, error>;" in out
    assert main(["wit", "--path"]) == 0
    assert Path(capsys.readouterr().out.strip(), "world.wit").is_file()


def test_run_without_a_guest_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 2
    assert "give a GUEST" in capsys.readouterr().err


def test_run_with_an_unknown_agent_names_the_defined_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[tooling.t]\ncommand = "x"\n[agents.alpha]\ncomponent = "a.wasm"\n')
    assert main(["run", "--config", str(config), "--agent", "beta"]) == 2
    err = capsys.readouterr().err
    assert "--agent beta: no [agents.beta] table in" in err and "defined agents: alpha" in err


def test_run_of_a_path_that_does_not_exist_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "missing")]) == 2
    assert "no such guest folder or .wasm file" in capsys.readouterr().err


def test_build_of_a_folder_without_a_module_says_how_to_fix_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    assert main(["build", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "cannot tell which module defines WitWorld (found a, b)" in err and "--module" in err


@pytest.mark.parametrize("command", ["run", "build", "new", "tools", "call", "config", "wit"])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert "exit codes: 0 ok" in capsys.readouterr().out or command == "config"


def test_new_creates_a_guest_from_the_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "scout", "--dir", str(tmp_path)]) == 0
    app = (tmp_path / "scout" / "app.py").read_text()
    assert "class WitWorld(wit_world.WitWorld):" in app
    compile(app, "app.py", "exec")
    assert main(["new", "scout", "--dir", str(tmp_path)]) == 2
