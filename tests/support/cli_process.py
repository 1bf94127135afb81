"""The one door through which tests start `agent-host` as a process, always in a clean environment.

Every test that runs the command line as a child (`python -m agent_host ARGS`, the `agent-host`
console script, or a `python -c` script calling `agent_host.cli`) goes through `run` or `start`,
whose environment is `environment()`:

- no `AGENT_HOST_*` (nor click's `_AGENT_HOST_COMPLETE`) from the developer's shell: an
  `AGENT_HOST_CONFIG` there would otherwise choose the child's configuration, `AGENT_HOST_CACHE_MAX`
  prune the shared cache, `AGENT_HOST_TOKENS` point at someone's tokens;
- `AGENT_HOST_CACHE` set to the cache of this test run (`cache_dir()`: the session's
  `AGENT_HOST_CACHE`, else the user's cache), so that the child finds the guests the run built;
- everything else kept, coverage's variables (`COVERAGE_PROCESS_CONFIG`) among them: the child is
  measured as the test run is.

A test's own variables (`extra`) are laid over that. The child is forked (`tests.support.forkserver`)
where the test run makes children forked (its variables kept: the child's own children are forked
too), else a real interpreter; the console script (`script`) always runs as it is installed.
Behaviour that needs no process is tested through `cli.main`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal, overload

from agent_host._support.paths import cache_dir
from tests.support.forkserver import PYTHON_VARIABLE, ForkServer

SCRIPT: Final = Path(sys.executable).with_name("agent-host")
"""The console script of the test run's environment."""

DEFAULT_TIMEOUT: Final = 300.0
"""Seconds `run` waits for the child unless told otherwise."""


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment less the developer's `AGENT_HOST_*` (but the fork server's), with
    the run's cache, plus `extra`."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.lstrip("_").startswith("AGENT_HOST_") or (key in ForkServer.VARIABLES and forking())
    }
    clean["AGENT_HOST_CACHE"] = str(cache_dir())
    return {**clean, **(extra or {})}


def forking() -> bool:
    """Whether this test's Python children are forked (`tests.support.forkserver`)."""
    return bool(os.environ.get(ForkServer.VARIABLES[0]))


def python() -> str:
    """The interpreter of this test's children: the fork server's launcher when they are forked."""
    return os.environ[PYTHON_VARIABLE] if forking() else ForkServer.REAL


def command(*args: str, script: bool = False, code: str | None = None) -> list[str]:
    """`python -m agent_host ARGS`; the console script with `script`; `python -c CODE ARGS` with `code`."""
    if code is not None:
        return [python(), "-c", code, *args]
    if script:
        return [str(SCRIPT), *args]
    return [python(), "-m", "agent_host", *args]


def run(
    *args: str,
    env: Mapping[str, str] | None = None,
    script: bool = False,
    code: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    **options: Any,
) -> subprocess.CompletedProcess[str]:
    """Run the command to its end (text, output captured, no check); `options` go to `subprocess.run`."""
    options = {"capture_output": True, "text": True, "check": False, **options}
    launched = command(*args, script=script, code=code)
    done: subprocess.CompletedProcess[str] = subprocess.run(launched, env=environment(env), timeout=timeout, **options)
    return done


@overload
def start(
    *args: str,
    env: Mapping[str, str] | None = None,
    script: bool = False,
    code: str | None = None,
    text: Literal[True] = True,
    **options: Any,
) -> subprocess.Popen[str]: ...


@overload
def start(
    *args: str,
    env: Mapping[str, str] | None = None,
    script: bool = False,
    code: str | None = None,
    text: Literal[False],
    **options: Any,
) -> subprocess.Popen[bytes]: ...


def start(
    *args: str,
    env: Mapping[str, str] | None = None,
    script: bool = False,
    code: str | None = None,
    text: bool = True,
    **options: Any,
) -> subprocess.Popen[str] | subprocess.Popen[bytes]:
    """Start the command (stdout and stderr piped; bytes with `text=False`); `options` go to `Popen`."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **options}
    return subprocess.Popen(command(*args, script=script, code=code), env=environment(env), text=text, **options)
