"""The command line without guests: config init/check, wit, usage errors and their exit codes.

Also `--help` for each command, `--agent` repeated, the names `new` accepts, `config init` and `check`
on real folders, `tools --json` keeping the toolings that failed and `call ... -` reading stdin.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agent_host._support import scratch
from agent_host.app.host import Host
from agent_host.cli import main
from agent_host.config import load_config
from agent_host.errors import ConfigError
from agent_host.policy.grants import AgentPolicy

DEMO_AND_BROKEN = (
    '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
    '[tooling.broken]\ncommand = "/nonexistent/server"\n'
)
"""Two toolings: the bundled server, and one whose command does not exist."""


def test_config_init_in_an_empty_folder_writes_no_agent_whose_guest_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "agent-host.toml"
    assert main(["config", "init", str(target)]) == 0
    assert target.read_text().startswith("# agent-host configuration")
    assert main(["config", "check", str(target)]) == 0
    assert f"agent-host: ok: {target}: toolings: demo; agents: none" in capsys.readouterr().err
    config = load_config(target)
    assert config.host.allow == ("demo",)


def test_config_init_makes_an_agent_of_each_guest_folder_and_keeps_ad_hoc_runs_granted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", "scout"]) == 0
    assert main(["config", "init"]) == 0
    assert main(["config", "check"]) == 0
    assert "agent-host.toml: toolings: demo; agents: scout" in capsys.readouterr().err
    config = load_config(tmp_path / "agent-host.toml")
    assert config.agents["scout"].component == tmp_path / "guests" / "scout"
    ad_hoc = AgentPolicy.resolve(config, "scout-copy")
    assert ad_hoc.grants.toolings == {"demo"}
    assert "[host]" in ad_hoc.grants.source


def test_config_check_reports_every_missing_component_and_failing_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "app.py").write_text("")
    target = tmp_path / "agent-host.toml"
    target.write_text(
        '[tooling.py]\nkind = "python"\ntools = ["no_such_module_here:tool"]\n'
        '[agents.gone]\ncomponent = "guests/gone"\n'
        '[agents.wasm]\ncomponent = "missing.wasm"\n'
        '[agents.good]\ncomponent = "ok"\n'
    )
    assert main(["config", "check", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"[agents.gone] component: {tmp_path / 'guests' / 'gone'}: no such guest folder or .wasm file" in err
    assert f"[agents.wasm] component: {tmp_path / 'missing.wasm'}: no such guest folder" in err
    assert "[agents.good]" not in err
    assert "cannot import 'no_such_module_here:tool' (ModuleNotFoundError" in err
    assert "3 problem(s) found" in err


def test_config_check_connect_completes_every_handshake_and_reports_the_ones_that_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "agent-host.toml"
    target.write_text(DEMO_AND_BROKEN)
    assert main(["config", "check", str(target)]) == 0
    capsys.readouterr()
    assert main(["config", "check", "--connect", str(target)]) == 2
    err = capsys.readouterr().err
    assert "tooling demo: connected" in err
    assert "problem: [tooling.broken]: unavailable:" in err and "/nonexistent/server" in err


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
    assert "package agent-host:guest@0.3.0;" in out
    assert "call-tool-blocking: func(name: string, arguments: string) -> result<tool-result, error>;" in out
    assert "chat-stream: func(request: chat-request) -> result<string, error>;" in out
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
    assert main([command, "--help"]) == 0  # main returns the exit code, also for --help
    assert "exit codes: 0 ok" in capsys.readouterr().out or command == "config"


def test_new_creates_a_guest_from_the_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "scout", "--dir", str(tmp_path)]) == 0
    app = (tmp_path / "scout" / "app.py").read_text()
    assert "@agent\ndef run(input: str)" in app and 'demo = tooling("demo")' in app  # the plain-function style
    compile(app, "app.py", "exec")
    assert main(["new", "scout", "--dir", str(tmp_path)]) == 2


@pytest.mark.parametrize("name", ["my agent", "../escape", "a/b", "_hidden", "", "dot.ted", "é"])
def test_new_refuses_a_name_that_is_not_a_valid_agent_name_and_states_the_rule(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", name, "--dir", str(tmp_path / "guests")]) == 2
    assert "letters, digits, '-' and '_'" in capsys.readouterr().err
    assert not (tmp_path / "guests").exists() and not (tmp_path / "escape").exists()


def test_new_quotes_the_path_in_its_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent = tmp_path / "my guests"
    assert main(["new", "scout", "--dir", str(parent)]) == 0
    assert f"agent-host run '{parent / 'scout'}'" in capsys.readouterr().err


def test_an_agent_table_with_an_invalid_name_is_a_config_error(tmp_path: Path) -> None:
    target = tmp_path / "agent-host.toml"
    target.write_text('[agents."my agent"]\ncomponent = "x.wasm"\n')
    with pytest.raises(ConfigError, match="agents.my agent: 'my agent' is not a valid agent name"):
        load_config(target)


def test_host_allow_must_match_a_tooling(tmp_path: Path) -> None:
    target = tmp_path / "agent-host.toml"
    target.write_text('[host]\nallow = ["nope"]\n[tooling.t]\ncommand = "x"\n')
    with pytest.raises(ConfigError, match=r"host.allow\[0\]: 'nope' matches no tooling"):
        load_config(target)


def test_run_with_several_agents_and_a_guest_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[tooling.t]\ncommand = "x"\n[agents.a]\n[agents.b]\n')
    assert main(["run", "x.wasm", "--config", str(config), "--agent", "a", "--agent", "b"]) == 2
    assert "name at most one agent" in capsys.readouterr().err


def test_run_with_a_repeated_agent_checks_every_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[tooling.t]\ncommand = "x"\n[agents.a]\ncomponent = "a.wasm"\n')
    assert main(["run", "--config", str(config), "--agent", "a", "--agent", "zed"]) == 2
    assert "--agent zed: no [agents.zed] table" in capsys.readouterr().err


def test_tools_json_keeps_a_tooling_that_failed_with_its_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "agent-host.toml"
    target.write_text(DEMO_AND_BROKEN)
    assert main(["tools", "--json", "--config", str(target)]) == 2
    report = json.loads(capsys.readouterr().out)
    assert {"echo", "add"} <= {tool["name"] for tool in report["demo"]["tools"]}
    assert report["broken"]["error"]["code"] == "unavailable"
    assert "/nonexistent/server" in report["broken"]["error"]["message"]
    assert main(["tools", "broken", "--json", "--config", str(target)]) == 2
    assert json.loads(capsys.readouterr().out)["broken"]["error"]["code"] == "unavailable"


def test_call_reads_its_arguments_from_stdin_with_a_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"a": 2, "b": 3}'))
    assert main(["call", "demo", "add", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["structuredContent"] == {"sum": 5}


def test_a_host_whose_audit_log_cannot_be_opened_leaves_no_temporary_folder(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    target = tmp_path / "agent-host.toml"
    target.write_text(f'[host]\naudit_log = "{tmp_path / "a-file" / "audit.jsonl"}"\n')
    config = load_config(target)
    before = set(scratch.folder().glob("logs-*"))
    with pytest.raises(ConfigError):
        Host(config)
    assert set(scratch.folder().glob("logs-*")) == before


def test_config_check_json_lists_each_problem_of_a_file_on_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each problem is its own item of `problems`, not every problem in one string."""
    bad = tmp_path / "bad.toml"
    bad.write_text('[host]\nmemory = "lots"\n[tooling.a]\ncomand = "x"\n')
    assert main(["config", "check", str(bad), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert len(report["problems"]) == 3
    assert report["problems"][0].endswith(
        "host.memory: expected a size such as \"256MiB\" or a number of bytes, got 'lots'"
    )
    assert "tooling.a.comand: unknown key" in report["problems"][2]


FINDER = (
    "import wit_world\nfrom wit_world.imports import tooling\n\n\nclass WitWorld(wit_world.WitWorld):\n"
    "    def run(self, input: str) -> str:\n        with tooling.get('search') as search:\n"
    "            return search.name()\n"
)
"""A guest that asks for tooling `search`, as guests/finder does."""


def test_config_init_writes_only_agents_that_can_run_and_says_what_the_others_need(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the repository, `config init` must not write agent `finder`, which needs tooling `search`
    that the file does not define (and which `config check --connect` would pass as OK)."""
    monkeypatch.chdir(tmp_path)
    assert main(["new", "scout"]) == 0
    (tmp_path / "guests" / "finder").mkdir()
    (tmp_path / "guests" / "finder" / "app.py").write_text(FINDER)
    capsys.readouterr()
    assert main(["config", "init"]) == 0
    err = capsys.readouterr().err
    assert "finder" in err and "tooling 'search'" in err
    config = load_config(tmp_path / "agent-host.toml")
    assert sorted(config.agents) == ["scout"]
    text = (tmp_path / "agent-host.toml").read_text()
    assert "# [agents.finder]" in text and "[tooling.search]" in text
    assert main(["config", "check"]) == 0


def test_config_check_warns_of_a_tooling_an_agents_guest_names_that_it_cannot_get(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A guest may reach a tooling only on some inputs and handle its absence: a warning (exit 0),
    an error with `--strict` (for CI)."""
    (tmp_path / "finder").mkdir()
    (tmp_path / "finder" / "app.py").write_text(FINDER)
    demo = DEMO_AND_BROKEN.split("[tooling.broken]")[0]
    agent = '[agents.finder]\ncomponent = "finder"\ntoolings = ["demo"]\n'
    undefined, ungranted = tmp_path / "undefined.toml", tmp_path / "ungranted.toml"
    undefined.write_text(demo + agent)
    ungranted.write_text(demo + agent + '[tooling.search]\ncommand = "x"\n')
    not_defined = (
        f"[agents.finder]: its guest asks for tooling 'search' ({tmp_path / 'finder' / 'app.py'}:7), which "
        f"{undefined} does not define: add a [tooling.search] table and grant it in toolings"
    )
    assert main(["config", "check", str(undefined), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["warnings"] == [not_defined] and json.loads(out)["problems"] == []
    assert f"agent-host: warning: {not_defined}" in err
    assert main(["config", "check", str(undefined), "--strict", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["problems"] == [not_defined]
    assert main(["config", "check", str(ungranted), "--strict", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["problems"] == [
        f"[agents.finder]: its guest asks for tooling 'search' ({tmp_path / 'finder' / 'app.py'}:7), which the "
        f'agent is not granted: add "search" to toolings in {ungranted} [agents.finder]'
    ]


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("from agentlib import get\n\nget('search')\n", 3),
        ("from agentlib import get as g\ng(\n  'search')\n", 2),
        ("import agentlib\nagentlib.get('search')\n", 2),
        ("import agentlib as al\nal.get('search')\n", 2),
        ("from agentlib import tooling\nsearch = tooling('search')\n", 2),
        ("from wit_world.imports import tooling\ntooling.get('search')\n", 2),
        ("from wit_world.imports.tooling import get\nget('search')\n", 2),
        ("import wit_world.imports.tooling\nwit_world.imports.tooling.get('search')\n", 2),
    ],
)
def test_every_form_the_docs_teach_names_a_tooling(tmp_path: Path, source: str, line: int) -> None:
    from agent_host.components.needs import toolings_asked

    (tmp_path / "app.py").write_text(source)
    assert [(asked.tooling, asked.line) for asked in toolings_asked(tmp_path)] == [("search", line)]


@pytest.mark.parametrize(
    "source",
    [
        "from mylib import get\nget('search')\n",
        "d = {}\nd.get('search')\n",
        "import os\nos.environ.get('search')\n",
        "from agentlib import get\nget(name)\n",
    ],
)
def test_other_calls_named_get_name_no_tooling(tmp_path: Path, source: str) -> None:
    from agent_host.components.needs import toolings_asked

    (tmp_path / "app.py").write_text(source)
    assert toolings_asked(tmp_path) == []


@pytest.mark.parametrize(
    "source",
    [
        "import { get } from 'agent-host:guest/tooling@0.2.0';\nget('search');\n",
        "import { get as g } from \"agent-host:guest/tooling@0.2.0\";\ng('search');\n",
        "import * as tooling from 'agent-host:guest/tooling@0.2.0';\ntooling.get('search');\n",
    ],
)
def test_a_javascript_guest_names_a_tooling_in_each_form(tmp_path: Path, source: str) -> None:
    from agent_host.components.needs import toolings_asked

    (tmp_path / "app.js").write_text(source)
    assert [asked.tooling for asked in toolings_asked(tmp_path)] == ["search"]


@pytest.mark.parametrize("command", ["run", "dev", "build"])
def test_module_help_says_it_takes_a_module_name(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--module` takes a module name: its help does not say its default is `app.py`."""
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--module NAME" in text and "default: app.py" not in text
    assert "The module defining WitWorld, by its import name (app for app.py; default: app" in text


def test_a_second_command_line_in_one_process_prints_its_own_json_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`main` called twice in one process (an embedding, the in-process tests): the second `--json`
    command that failed printed no document, as if the first one's counted for it."""
    bad = tmp_path / "agent-host.toml"
    bad.write_text('[host]\nmemory = "lots"\n')
    for _ in range(2):
        assert main(["--config", str(bad), "tools", "--json"]) == 2
        assert json.loads(capsys.readouterr().out)["error"]["code"] == "config-error"


def test_config_init_into_a_folder_that_does_not_exist_makes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "new" / "sub" / "agent-host.toml"
    assert main(["config", "init", str(target)]) == 0
    assert load_config(target).toolings
    assert main(["config", "init", "/proc/nowhere/agent-host.toml"]) == 2
    err = capsys.readouterr().err
    assert "cannot write /proc/nowhere/agent-host.toml" in err and "Traceback" not in err
