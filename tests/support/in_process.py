"""The command line run in the test's own process: `agent_host.cli.main` with captured output.

For behaviour that needs no process of its own (rendering, exit codes, option parsing, config errors,
what a command prints): `run(*args)` answers as `subprocess.run` would (`returncode`, `stdout`,
`stderr`), without the ~0.8 s of CPU a child spends importing the package and the MCP SDK. The
command sees the environment a child would (`cli_process.environment()`: no `AGENT_HOST_*` from the
developer's shell, the run's cache) and runs in `cwd`; both are restored after. Signals, real exits
and child-process hygiene stay with `tests.support.cli_process`.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from agent_host.cli import main
from tests.support import cli_process
from tests.support.component import REPO


@contextmanager
def _scene(cwd: Path, env: dict[str, str], stdin: str) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run(
    *args: str, cwd: Path = REPO, env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`agent-host ARGS` in this process, in `cwd`, with `stdin`; its exit code and output."""
    with _scene(cwd, cli_process.environment(env), stdin) as (out, err):
        code = main(list(args))
    return subprocess.CompletedProcess(["agent-host", *args], code, out.getvalue(), err.getvalue())
