"""The coverage configuration of pyproject.toml measures `agent-host` child processes, although the
console script ends with `os._exit` (no atexit, so no data without coverage's `_exit` patch).

The child is given the project's configuration as coverage's subprocess patch gives it
(`COVERAGE_PROCESS_CONFIG`, read by the .pth file coverage installs), with its data file moved
into tmp_path, and the lines of `cli.root.entry` it ran must be in the data it left.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import coverage

from agent_host.cli import root
from tests.support import cli_process
from tests.support.component import REPO


def test_the_console_scripts_lines_up_to_its_os_exit_are_measured(tmp_path: Path) -> None:
    project = coverage.Coverage(config_file=str(REPO / "pyproject.toml"), data_file=str(tmp_path / ".coverage"))
    assert {"subprocess", "_exit"} <= set(project.config.patch)
    measured = {"COVERAGE_PROCESS_CONFIG": project.config.serialize()}
    done = cli_process.run("--version", script=True, env=measured, cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("agent-host "), done.stderr

    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    files = list(tmp_path.glob(".coverage.*"))
    assert files, f"the child left no coverage data: {sorted(p.name for p in tmp_path.iterdir())}"
    for file in files:
        part = coverage.CoverageData(basename=str(file))
        part.read()
        data.update(part)
    lines, first = inspect.getsourcelines(root.entry)
    shutdown = first + next(i for i, line in enumerate(lines) if "logging.shutdown()" in line)
    exiting = first + next(i for i, line in enumerate(lines) if "os._exit(code)" in line)
    ran = set(data.lines(str(Path(root.__file__).resolve())) or ())
    assert {shutdown, exiting} <= ran, sorted(ran)
