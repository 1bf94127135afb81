"""TypeScript declarations of the world for JavaScript guests: `agent-host bindings --lang ts`.

`write_ts_bindings(folder)` runs jco's type generator (guest side: what a guest imports, and the
`run` it exports) through node with `templates/ts_types.mjs.txt`, in a temporary sibling of
`folder`, adds the stamp (`bindings.STAMP`, with `ts_bindings_key`) and moves it into place as
`components.bindings` does for Python: an older copy written by this command is replaced, any
other folder is refused, nothing half-written is ever at `folder`. The declarations are ambient
modules (`declare module 'agent-host:guest/tooling@0.3.0'`): a `jsconfig.json` or `tsconfig.json`
that includes them checks a guest's imports, with `tsc` or an editor. Beside them, `LIBRARY_FILE`
declares the module `agentlib` (the library every JavaScript build bundles, `js_build.LIBRARY`),
copied from `paths.js_lib_dir()`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Final

from agent_host._support.paths import js_lib_dir, template, wit_dir
from agent_host._support.progress import progress
from agent_host._support.stopping import StopToken, run_child
from agent_host._version import __version__
from agent_host.components.bindings import STAMP, refuse_foreign, swap_in
from agent_host.components.build import WORLD, digest_files
from agent_host.components.js_toolchain import JCO_VERSION, toolchain
from agent_host.errors import BuildError

DEFAULT_FOLDER: Final = Path("typings-ts")
"""Where `agent-host bindings --lang ts` writes without DIR (relative to the current folder)."""

FORMAT: Final = 2
"""Version of the folder's layout; a new one makes older folders stale (2: with `LIBRARY_FILE`)."""

WORLD_FILE: Final = "agent.d.ts"
"""The world's declaration file (it references one file per interface, under `interfaces/`)."""

LIBRARY_FILE: Final = "agentlib.d.ts"
"""The declarations of the guest library (`declare module "agentlib"`), in `paths.js_lib_dir()` and the folder."""

_SCRIPT: Final = "ts_types.mjs.txt"


def ts_bindings_key() -> str:
    """sha256 of what the declarations are made from: the WIT package, the library's declarations,
    jco's version and `FORMAT`."""
    digest = hashlib.sha256(f"jco {JCO_VERSION}\0world {WORLD}\0format {FORMAT}\0ts\0".encode())
    digest_files(digest, "wit", wit_dir(), sorted(wit_dir().rglob("*.wit")))
    digest_files(digest, "lib", js_lib_dir(), [js_lib_dir() / LIBRARY_FILE])
    return digest.hexdigest()[:24]


def write_ts_bindings(folder: Path, *, stop: StopToken | None = None) -> Path:
    """Write the declarations into `folder` (created, or replacing an older copy); returns it.

    Raises `UsageError` when `folder` is a file or a folder not written by agent-host, `BuildError`
    when node/npm are missing or jco fails, `Interrupted` on a stop request; in each case `folder`
    is unchanged and no temporary folder is left."""
    folder = folder.absolute()
    refuse_foreign(folder)
    tools = toolchain(stop)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        what = f"writing TypeScript declarations with jco {JCO_VERSION}"
        fresh = work / folder.name
        script = work / "ts_types.mjs"
        script.write_text(template(_SCRIPT), encoding="utf-8")
        with progress(what):
            command = [str(tools.node), str(script), str(tools.jco_bindgen), str(wit_dir()), str(fresh)]
            returncode, output = run_child(command, stop, what)
            if returncode != 0 or not (fresh / WORLD_FILE).is_file():
                tail = output.strip()[-3000:]
                raise BuildError(f"writing TypeScript declarations failed (exit {returncode}):\n{tail}")
        shutil.copyfile(js_lib_dir() / LIBRARY_FILE, fresh / LIBRARY_FILE)
        stamp = {"written_by": f"agent-host {__version__} bindings --lang ts", "jco": JCO_VERSION, "world": WORLD}
        (fresh / STAMP).write_text(json.dumps({**stamp, "key": ts_bindings_key()}, indent=2) + "\n", encoding="utf-8")
        swap_in(fresh, folder, work / "old")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder
