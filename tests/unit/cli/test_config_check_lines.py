"""`agent-host config check` writes every line in one style on stderr; stdout holds only `--json`'s document.

Problems (`agent-host: problem: ...`), warnings (`agent-host: warning: ...`) and the verdict
(`agent-host: ok: FILE: toolings: ...; agents: ...`, or `agent-host: error: FILE: N problem(s)
found`) all go to stderr; without `--json` stdout stays empty, with it stdout is the JSON document alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_host.errors import ExitCode
from tests.support import in_process

DEMO = '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
"""A file with one tooling, the bundled server, and no problem."""
FINDER = "from agentlib import get\n\nget('search')\n"
"""A guest that asks for tooling `search`, which the files here do not define: a warning."""


def lines_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_a_file_without_problems_gets_the_ok_verdict_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(DEMO)
    checked = in_process.run("config", "check", str(config), cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (ExitCode.SUCCESS, ""), checked.stderr
    assert lines_of(checked.stderr) == [f"agent-host: ok: {config}: toolings: demo; agents: none"]


def test_warnings_and_the_verdict_share_the_prefix_and_json_is_alone_on_stdout(tmp_path: Path) -> None:
    (tmp_path / "finder").mkdir()
    (tmp_path / "finder" / "app.py").write_text(FINDER)
    config = tmp_path / "agent-host.toml"
    config.write_text(DEMO + '[agents.finder]\ncomponent = "finder"\ntoolings = ["demo"]\n')
    checked = in_process.run("config", "check", str(config), "--json", cwd=tmp_path)
    assert checked.returncode == ExitCode.SUCCESS, checked.stderr
    assert json.loads(checked.stdout)["ok"] is True
    warning, verdict = lines_of(checked.stderr)
    assert warning.startswith("agent-host: warning: [agents.finder]: its guest asks for tooling 'search'")
    assert verdict == f"agent-host: ok: {config}: toolings: demo; agents: finder (1 warning(s) above)"


def test_problems_and_the_failed_verdict_share_the_prefix(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(DEMO + '[agents.lost]\ncomponent = "nowhere"\n')
    checked = in_process.run("config", "check", str(config), cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (ExitCode.USAGE_ERROR, ""), checked.stderr
    lines = lines_of(checked.stderr)
    assert lines[0].startswith("agent-host: problem: [agents.lost] component:"), lines
    assert lines[-1] == f"agent-host: error: {config}: 1 problem(s) found (listed above)", lines
    assert all(line.startswith(("agent-host: ", "  hint: ")) for line in lines), lines
