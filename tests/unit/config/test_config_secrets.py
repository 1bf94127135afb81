"""A config error shows what the file says, never the value a `${VAR}` expanded to.

A token expanded into a malformed value (a `timeout`, say) is printed neither in the error nor by
`config check --json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_host.cli import main
from agent_host.config import HttpToolingConfig, parse_config
from agent_host.errors import ConfigError

SECRET = "s3cr3t-t0ken-value"

BAD_VALUES = {
    "a duration": '[tooling.a]\ncommand = "x"\ntimeout = "${TOKEN}"\n',
    "a size": '[host]\nmemory = "${TOKEN}"\n',
    "a whole number": '[host]\ninbox_size = "${TOKEN}"\n',
    "a boolean": '[tooling.a]\ncommand = "x"\npin_tools = "${TOKEN}"\n',
    "a choice": '[tooling.a]\ncommand = "x"\nelicitation = "${TOKEN}"\n',
    "a URL": '[tooling.a]\nurl = "ftp://${TOKEN}@h/"\n',
    "a transport": '[tooling.a]\ncommand = "x"\ntransport = "${TOKEN}"\n',
    "a kind": '[tooling.a]\nkind = "${TOKEN}"\n',
    "a capability": '[tooling.a]\ncommand = "x"\ncapabilities = { "*" = ["${TOKEN}"] }\n',
    "a grant": '[tooling.a]\ncommand = "x"\n[agents.b]\ntoolings = ["${TOKEN}"]\n',
    "a bind": '[serve]\nhttp = "${TOKEN}"\n',
    "a ray address": '[host]\nray_address = "${TOKEN}"\n',
    "a list given a table": '[tooling.a]\ncommand = "x"\nargs = { token = "Bearer ${TOKEN}" }\n',
    "a string given a list": '[tooling.a]\ncommand = ["${TOKEN}"]\n',
}


@pytest.mark.parametrize("text", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_config_error_quotes_the_variable_not_its_value(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, Path("/etc/agent/agent-host.toml"), {"TOKEN": SECRET})
    shown = [str(caught.value), *caught.value.problems]
    assert all(SECRET not in line for line in shown), shown
    assert "${TOKEN}" in str(caught.value)


def test_config_check_json_never_prints_the_expanded_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", SECRET)
    bad = tmp_path / "agent-host.toml"
    bad.write_text('[tooling.a]\ncommand = "x"\ntimeout = "${TOKEN}"\n')
    assert main(["config", "check", str(bad), "--json"]) == 2
    out, err = capsys.readouterr()
    assert SECRET not in out and SECRET not in err
    problem = f"{bad}: tooling.a.timeout: expected a number of seconds > 0, got '${{TOKEN}}'"
    assert json.loads(out)["problems"] == [problem]


def test_an_http_tooling_names_its_url_as_the_file_writes_it() -> None:
    """The URL reaches messages that guests and remote clients read: never with its secrets."""
    text = '[tooling.a]\nurl = "https://h.example/mcp?key=${KEY}"\n'
    tooling = parse_config(text, Path("/etc/agent/agent-host.toml"), {"KEY": SECRET}).toolings["a"]
    assert isinstance(tooling, HttpToolingConfig)
    assert tooling.url == f"https://h.example/mcp?key={SECRET}"
    assert tooling.shown_url == "https://h.example/mcp?key=${KEY}"
