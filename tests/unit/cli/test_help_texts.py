"""Each command's `--help` says what the command does, as the README does.

`serve --help` says what an agent takes (an agent with `input_schema` takes that object) and the HTTP
API, `build --help` what a guest folder is and what a build holds, `--json` what a failure prints, and
each command lists the exit codes it can end with.
"""

from __future__ import annotations

import pytest

from agent_host.cli import main


def help_of(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    assert main([*command, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_serve_help_tells_what_an_agent_takes_and_the_http_api(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "serve")
    assert "input_schema" in text and "as JSON text" in text
    assert "GET /tools/list" in text and "POST /tools/NAME" in text
    assert "stdin closes" in text


def test_build_help_tells_what_a_guest_folder_is_and_what_a_build_holds(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "build")
    assert "a folder with app.py" not in text
    assert "--module" in text and "only module" in text
    assert "imported only at run time" in text and "never the packages installed beside agent-host" in text


@pytest.mark.parametrize("command", [["run"], ["call"], ["tools"]])
def test_json_help_tells_what_a_failure_prints(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    assert '{"error": {"code", "message", "data"}}' in help_of(capsys, *command)


def test_config_check_help_tells_what_it_checks(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(capsys, "config", "check")
    assert "every problem at once" in text and "A tooling an agent's guest names" in text and "--strict" in text


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        (["run"], "0 ok, 1 the guest (or a called tool) returned an error, 2 usage or configuration error, "
         "3 trap or limit, 4 a replayed run diverged from its cassette, 130 stopped by SIGINT (Ctrl-C), "
         "143 stopped by SIGTERM."),
        (["serve"], "0 ok, 2 usage or configuration error, 130 stopped by SIGINT (Ctrl-C), 143 stopped by SIGTERM."),
        (["new"], "0 ok, 2 usage or configuration error."),
    ],
)  # fmt: skip
def test_each_command_lists_the_exit_codes_it_can_end_with(
    capsys: pytest.CaptureFixture[str], command: list[str], codes: str
) -> None:
    text = " ".join(help_of(capsys, *command).split())
    assert f"exit codes: {codes}" in text
    assert "config file: --config FILE, else $AGENT_HOST_CONFIG, else ./agent-host.toml" in text


def test_the_exit_codes_name_a_called_tools_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert "1 the guest (or a called tool) returned an error" in help_of(capsys, "call")


def test_a_missing_module_tells_the_build_work_around() -> None:
    """A build holds the standard-library modules imported as its code loads (componentize-py 0.25
    has no option to add others): the message of a guest that imports one later says what to do."""
    from agent_host.errors import missing_module_hints

    hints = missing_module_hints("No module named 'requests.adapters'", "guests/scout")
    assert hints[0].startswith("copy it into the guest folder: pip install --no-deps --target guests/scout requests")
    assert "at the top of app.py" in hints[-1]
    assert all(len(hint) < 200 for hint in hints)
