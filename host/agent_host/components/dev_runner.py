"""The runner: one prebuilt component that runs a Python guest from its source (dev mode,
`agent_host.app.devmode`), a code agent's snippet (code mode: `code_runners`), and compiles a
guest's sources to check their syntax (`components.syntax`).

The runner (`templates/dev_runner.py.txt`) is built once per WIT package, guest library and
componentize-py version (like any guest, with `build_guest`) and cached; a guest's source change
never rebuilds it. Its run reads the guest's module from `SOURCE` (the guest's folder, preopened
read-only), named by the WASI environment variable `MODULE_VARIABLE`; with `CHECK_VARIABLE` set it
only compiles the sources its input holds and answers the first syntax error (`check_answer`); with
`policy.code_agents.CODE_VARIABLE` set its input is a snippet (`templates/code_mode.py.txt`, bundled
as `_agent_host_code` with `_support/signatures.py` as `_agent_host_signatures`).
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path
from typing import Final

from agent_host import cache
from agent_host._support import signatures
from agent_host._support.paths import cache_dir, template
from agent_host._support.stopping import StopToken
from agent_host.components.build import build_guest, cached_build
from agent_host.policy.code_agents import CODE_VARIABLE

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
_CODE_TEMPLATE: Final = "code_mode.py.txt"
_CODE_MODULE: Final = "_agent_host_code"
_SIGNATURES_MODULE: Final = "_agent_host_signatures"


def runner_source() -> str:
    """The runner module's text."""
    text = template(_TEMPLATE)
    return string.Template(text).substitute(
        source=SOURCE, module_variable=MODULE_VARIABLE, check_variable=CHECK_VARIABLE
    )


def _modules() -> dict[str, str]:
    """The runner's modules by file name: the runner, code mode and the signature renderer."""
    code = string.Template(template(_CODE_TEMPLATE)).substitute(code_variable=CODE_VARIABLE)
    return {
        f"{RUNNER_MODULE}.py": runner_source(),
        f"{_CODE_MODULE}.py": code,
        f"{_SIGNATURES_MODULE}.py": Path(signatures.__file__).read_text(encoding="utf-8"),
    }


def source_folder(kind: str, modules: dict[str, str]) -> Path:
    """The cache's private folder of a runner's sources (`kind`: "dev-runner", "js-runner"), keyed by
    the texts of its `modules` (file name -> text); made, not written."""
    version = hashlib.sha256(json.dumps(modules, sort_keys=True).encode()).hexdigest()[:16]
    return cache.private_folder(cache_dir(), kind, version, kind)  # built as it is


def _written(folder: Path, modules: dict[str, str]) -> bool:
    """Whether `folder` holds `modules` as they are."""
    return all(
        (folder / name).is_file() and (folder / name).read_text(encoding="utf-8") == text
        for name, text in modules.items()
    )


def written_folder(kind: str, modules: dict[str, str]) -> Path:
    """`source_folder(kind, modules)` holding `modules` (written when they differ), ready to build."""
    folder = source_folder(kind, modules)
    if not _written(folder, modules):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in modules.items():
            (folder / name).write_text(text, encoding="utf-8")
    return folder


def runner_component(stop: StopToken | None = None) -> Path:
    """The runner component, built on first use (a progress line; ~15 s once) and cached after.
    Raises `BuildError` or `Interrupted` as `build.build_guest` does."""
    folder = written_folder("dev-runner", _modules())
    label = "the runner of dev mode and code agents (once; cached)"
    return build_guest(folder, module=RUNNER_MODULE, stop=stop, label=label, check=False)  # it is the checker


def built_runner() -> Path | None:
    """The runner component when the cache holds it already (`agent-host dev --prepare`, or a first
    dev run, built it), else None: nothing is built."""
    modules = _modules()
    folder = source_folder("dev-runner", modules)
    if not _written(folder, modules):
        return None
    return cached_build(folder, RUNNER_MODULE)
