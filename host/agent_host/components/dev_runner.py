"""The dev runner: one prebuilt component that runs a Python guest from its source (dev mode,
`agent_host.app.devmode`), and compiles a guest's sources to check their syntax (`components.syntax`).

The runner (`templates/dev_runner.py.txt`) is built once per WIT package, guest library and
componentize-py version (like any guest, with `build_guest`) and cached; a guest's source change
never rebuilds it. Its run reads the guest's module from `SOURCE` (the guest's folder, preopened
read-only), named by the WASI environment variable `MODULE_VARIABLE`; with `CHECK_VARIABLE` set it
only compiles the sources its input holds and answers the first syntax error (`check_answer`).
"""

from __future__ import annotations

import hashlib
import string
from pathlib import Path
from typing import Final

from agent_host import cache
from agent_host._support.paths import cache_dir, template
from agent_host._support.stopping import StopToken
from agent_host.components.build import build_guest, cached_build

RUNNER_MODULE: Final = "_agent_host_dev"
"""The runner's module name (its frames are left out of "raised at FILE:LINE")."""

SOURCE: Final = "/.agent-host/src"
"""Where the guest's folder appears inside the sandbox, read-only."""

MODULE_VARIABLE: Final = "AGENT_HOST_DEV_MODULE"
"""The environment variable telling the runner which module defines `WitWorld`."""

CHECK_VARIABLE: Final = "AGENT_HOST_DEV_CHECK"
"""The environment variable (set to anything) that makes the runner's `run` only compile: its input is
JSON `{"path": "source text", ...}`, its answer JSON: null when they all compile, else the first
`SyntaxError` in their order, `{"kind", "msg", "filename", "lineno", "offset", "end_lineno",
"end_offset", "text"}`."""

_TEMPLATE: Final = "dev_runner.py.txt"


def runner_source() -> str:
    """The runner module's text."""
    text = template(_TEMPLATE)
    return string.Template(text).substitute(
        source=SOURCE, module_variable=MODULE_VARIABLE, check_variable=CHECK_VARIABLE
    )


def _runner_folder() -> tuple[Path, str]:
    """The runner's folder in the cache (made) and its module's text."""
    text = runner_source()
    version = hashlib.sha256(text.encode()).hexdigest()[:16]
    return cache.private_folder(cache_dir(), "dev-runner", version, "dev-runner"), text  # built as it is


def runner_component(stop: StopToken | None = None) -> Path:
    """The runner component, built on first use (a progress line; ~15 s once) and cached after.
    Raises `BuildError` or `Interrupted` as `build.build_guest` does."""
    folder, text = _runner_folder()
    module = folder / f"{RUNNER_MODULE}.py"
    if not module.is_file() or module.read_text(encoding="utf-8") != text:
        folder.mkdir(parents=True, exist_ok=True)
        module.write_text(text, encoding="utf-8")
    label = "the dev runner (once; cached for every guest)"
    return build_guest(folder, module=RUNNER_MODULE, stop=stop, label=label, check=False)  # it is the checker


def built_runner() -> Path | None:
    """The runner component when the cache holds it already (`agent-host dev --prepare`, or a first
    dev run, built it), else None: nothing is built."""
    folder, text = _runner_folder()
    module = folder / f"{RUNNER_MODULE}.py"
    if not module.is_file() or module.read_text(encoding="utf-8") != text:
        return None
    return cached_build(folder, RUNNER_MODULE)
