"""The JavaScript guest toolchain: componentize-js and jco, pinned, installed on first use.

`toolchain(stop)` gives the installed `Toolchain`: node, and the two packages' folders under
`<cache>/npm/js-guests-<componentize-js>-<jco>/`. The first call runs `npm install` of exactly
`COMPONENTIZE_JS_VERSION` and `JCO_VERSION` there (a progress line, ~10 s, ~390 MB), one process at a
time (`cache.turn`): another process needing it waits and then uses it. An install is complete only
once its stamp (`INSTALLED`) is written, so a stopped or failed install is redone, never half used.
node and npm are looked up on PATH; missing, they are named in the error with how to get them.
componentize-js 0.23 imports jco's preview2-shim without declaring it, so both are installed
together; the CLIs are run by path (jco's alias of an older componentize-js has the same bin name).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_host import cache
from agent_host._support.paths import cache_dir
from agent_host._support.progress import progress
from agent_host._support.stopping import StopToken, run_child
from agent_host.errors import BuildError

COMPONENTIZE_JS_VERSION: Final = "0.23.0"
JCO_VERSION: Final = "1.35.0"
PACKAGES: Final = (
    f"@bytecodealliance/componentize-js@{COMPONENTIZE_JS_VERSION}",
    f"@bytecodealliance/jco@{JCO_VERSION}",
)
INSTALLED: Final = ".agent-host-installed"
"""The stamp of a complete install (written last)."""
INSTALL_OUTPUT_TAIL: Final = 2000
"""Characters of npm's output quoted when it fails."""
NODE_HINT: Final = (
    "JavaScript guests are built with componentize-js, which runs on Node.js (18 or newer) and is installed "
    "with npm: install both (e.g. `apt install nodejs npm`, or from https://nodejs.org) and put them on PATH"
)


@dataclass(frozen=True)
class Toolchain:
    """An installed toolchain: `node`, and the package folders of componentize-js and jco."""

    node: Path
    prefix: Path

    @property
    def componentize_js(self) -> Path:
        """componentize-js's command-line script (run with `node`)."""
        return self.prefix / "node_modules" / "@bytecodealliance" / "componentize-js" / "src" / "cli.js"

    @property
    def jco_bindgen(self) -> Path:
        """jco's type generator (an ES module exporting `generateTypes`)."""
        vendor = self.prefix / "node_modules" / "@bytecodealliance" / "jco-transpile" / "vendor"
        return vendor / "js-component-bindgen-component.js"


def folder() -> Path:
    """Where the pinned toolchain is (or will be) installed."""
    return cache_dir() / "npm" / f"js-guests-{COMPONENTIZE_JS_VERSION}-{JCO_VERSION}"


def node_and_npm() -> tuple[Path, Path]:
    """node and npm from PATH. Raises `BuildError` naming what is missing, with how to get it."""
    node, npm = shutil.which("node"), shutil.which("npm")
    missing = [name for name, found in (("node", node), ("npm", npm)) if found is None]
    if node is None or npm is None:
        names = " and ".join(missing)
        raise BuildError(f"{names} not found on PATH: a JavaScript guest cannot be built", hint=NODE_HINT)
    return Path(node), Path(npm)


def toolchain(stop: StopToken | None = None) -> Toolchain:
    """The pinned toolchain, installed into the cache first if it is not there (see the module).
    Raises `BuildError` (node or npm missing, npm failed), `Interrupted` on a stop request and
    `UnsafeCacheError` when another user may write in the cache (`cache.private`)."""
    node, npm = node_and_npm()
    prefix = folder()
    cache.private_folder(cache_dir(), cache.contents.NPM, prefix.name)  # node runs what it holds: the user's alone
    installed = Toolchain(node, prefix)
    if (prefix / INSTALLED).is_file():
        return installed
    what = f"installing componentize-js {COMPONENTIZE_JS_VERSION} and jco {JCO_VERSION} with npm (once; cached after)"
    lock = cache_dir() / "locks" / f"npm-{prefix.name}.lock"
    waiting = f"waiting for another agent-host process {what}"
    with cache.turn(lock, stop.wait if stop is not None else None, lambda: progress(waiting)) as mine:
        if not mine and stop is not None:
            stop.check(what)
        if (prefix / INSTALLED).is_file():  # installed by the process we waited for
            return installed
        prefix.mkdir(parents=True, exist_ok=True)
        command = [str(npm), "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
        command += PACKAGES
        with progress(what):
            returncode, output = run_child(command, stop, what, cwd=prefix)
        if returncode != 0 or not installed.componentize_js.is_file():
            raise BuildError(
                f"npm install of {' and '.join(PACKAGES)} failed (exit {returncode}):\n"
                f"{output.strip()[-INSTALL_OUTPUT_TAIL:]}",
                hint="check that the npm registry is reachable (npm config get registry), then run the command again",
            )
        (prefix / INSTALLED).write_text(" ".join(PACKAGES) + "\n", encoding="utf-8")
    return installed
