"""How long a guest build may take: `AGENT_HOST_BUILD_TIMEOUT` seconds (default 600).

A guest's top-level code runs while it is built (componentize-py and componentize-js pre-initialise
the component by running it), so a loop or a wait at the top level of a guest's module would make
the build run forever; past the timeout the build is ended (no process left) and `timed_out` says why.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from agent_host.errors import BuildError, UsageError

ENV_BUILD_TIMEOUT: Final = "AGENT_HOST_BUILD_TIMEOUT"
DEFAULT_BUILD_TIMEOUT: Final = 600.0
"""Seconds: 20-40 times what a build of a small guest takes."""


def build_timeout() -> float:
    """The build timeout in seconds. Raises `UsageError` when `AGENT_HOST_BUILD_TIMEOUT` is not a
    positive number."""
    text = os.environ.get(ENV_BUILD_TIMEOUT, "").strip()
    if not text:
        return DEFAULT_BUILD_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise UsageError(f"{ENV_BUILD_TIMEOUT}={text!r} is not a number of seconds", hint="for example: 900")
    return seconds


def timed_out(folder: Path, seconds: float) -> BuildError:
    """The error of a build of `folder` ended after `seconds`."""
    return BuildError(
        f"building {folder} did not finish within {seconds:g} s: a guest's top-level code runs while it is built, "
        "so a loop or a wait at the top level of one of its modules never lets the build end",
        hint=f"move that work into run(), or allow more time with {ENV_BUILD_TIMEOUT}=SECONDS",
    )
