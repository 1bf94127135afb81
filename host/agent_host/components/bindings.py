"""Typed bindings for editors and type checkers: `wit_world`, `componentize_py_types` and `agentlib`.

`write_bindings(folder)` runs componentize-py's `bindings` for the world `agent` in a temporary
sibling of `folder`, adds the guest library, `py.typed` markers, a `# mypy: ignore-errors` head on
every module (a reference, not code to check) and a stamp (`STAMP`: what it was made from), then
moves it into place: an older copy is renamed aside, the new one renamed in (put back if that
fails) and the old removed; nothing half-written is ever at `folder`. A folder without the stamp is
never replaced (it may hold other stubs). The folder must not be on a guest's module path; the
default, `./typings`, sits beside the guest folders and is where pyright looks for stubs by itself.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Final

from agent_host._support.paths import guest_lib_dir, wit_dir
from agent_host._support.progress import progress
from agent_host._support.stopping import StopToken, run_child
from agent_host._version import __version__
from agent_host.components.build import _RUNNER as COMPONENTIZE_PY  # the host's one way to run componentize-py
from agent_host.components.build import COMPONENTIZE_PY_VERSION, WORLD, digest_files
from agent_host.errors import BuildError, UsageError

DEFAULT_FOLDER: Final = Path("typings")
"""Where `agent-host bindings` writes without DIR (relative to the current folder)."""

STAMP: Final = ".agent-host-bindings.json"
"""The file marking a folder as written by `write_bindings`, with the key of what it holds."""

FORMAT: Final = 1
"""Version of the folder's layout; a new one makes older folders stale."""

HEADER: Final = "# mypy: ignore-errors\n# (agent-host bindings: a reference for type checkers, not code to check)\n"
"""The first lines of every module of the folder: mypy reports nothing inside it (pyright checks
only the files of its project)."""

GENERATED: Final = ("wit_world", "componentize_py_types.py")
"""What is kept of componentize-py's output: the world's bindings and the types they use (the rest,
`componentize_py_async_support`, `poll_loop`..., serves async and wasi:http worlds)."""
OUTPUT_TAIL: Final = 3000
"""Characters of componentize-py's output quoted when it fails."""

_SKIP_NAMES: Final = {"__pycache__", ".mypy_cache", ".ruff_cache"}


class State(enum.Enum):
    """What a bindings folder holds, compared with what `write_bindings` would write now."""

    MISSING = "missing"
    CURRENT = "current"
    STALE = "stale"
    """Written by agent-host from another WIT, guest library or componentize-py."""
    FOREIGN = "foreign"
    """Not written by agent-host (no stamp): never replaced."""


def bindings_key() -> str:
    """sha256 of what the bindings are made from: the WIT package, the guest library, the
    componentize-py version and `FORMAT`."""
    digest = hashlib.sha256(f"componentize-py {COMPONENTIZE_PY_VERSION}\0world {WORLD}\0format {FORMAT}\0".encode())
    for label, root in (("wit", wit_dir()), ("lib", guest_lib_dir())):
        digest_files(digest, label, root, _files(root))
    return digest.hexdigest()[:24]


def state(folder: Path, key: str | None = None) -> State:
    """The `State` of `folder` against `key` (default: `bindings_key()`; the TypeScript bindings
    pass theirs); runs nothing (cheap enough for `agent-host new`)."""
    if not folder.exists():
        return State.MISSING
    if not (folder / STAMP).is_file():
        return State.MISSING if folder.is_dir() and not any(folder.iterdir()) else State.FOREIGN
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return State.STALE
    current = key if key is not None else bindings_key()
    return State.CURRENT if isinstance(stamp, dict) and stamp.get("key") == current else State.STALE


def write_bindings(folder: Path, *, stop: StopToken | None = None) -> Path:
    """Write the bindings into `folder` (created, or replacing an older copy); returns it.

    Raises `UsageError` when `folder` is a file or a folder not written by agent-host (left as it
    is), `BuildError` with componentize-py's output when it fails, `Interrupted` when `stop` is
    set meanwhile; in each case `folder` is unchanged and no temporary folder is left."""
    folder = folder.absolute()
    refuse_foreign(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        what = f"writing typed bindings with componentize-py {COMPONENTIZE_PY_VERSION}"
        with progress(what):
            generated = _generate(work / "generated", stop, what)
            fresh = _assemble(generated, work / folder.name)
            swap_in(fresh, folder, work / "old")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def refuse_foreign(folder: Path) -> None:
    """Raise `UsageError` when `folder` is a file, or a folder not written by agent-host bindings."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} is a file, not a folder", hint="pass a folder for the bindings")
    if state(folder) is State.FOREIGN:
        raise UsageError(
            f"{folder} exists and was not written by agent-host bindings (no {STAMP}); it is left as it is",
            hint="choose another folder, or remove this one",
        )


def _generate(output: Path, stop: StopToken | None, what: str) -> Path:
    """componentize-py's bindings of the world in `output` (which must not exist); raises `BuildError`
    naming the last line of its output when it fails or leaves out part of `GENERATED`."""
    command = [sys.executable, "-c", COMPONENTIZE_PY, "-d", str(wit_dir()), "-w", WORLD, "bindings", str(output)]
    returncode, text = run_child(command, stop, what, env={**os.environ, "RUST_BACKTRACE": "0"})
    missing = [name for name in GENERATED if not (output / name).exists()]
    if returncode != 0 or missing:
        text = text.strip()[-OUTPUT_TAIL:]
        cause = text.splitlines()[-1].strip() if text else f"componentize-py exit {returncode}"
        if returncode == 0:
            cause = f"componentize-py wrote no {', '.join(missing)}"
        raise BuildError(f"writing bindings failed: {cause}\n{text}".rstrip())
    return output


def _assemble(generated: Path, fresh: Path) -> Path:
    """`fresh`: `GENERATED` from `generated`, the guest library, `py.typed` in each package, `HEADER`
    on each module, and the stamp."""
    fresh.mkdir()
    for name in GENERATED:
        os.rename(generated / name, fresh / name)
    for entry in sorted(guest_lib_dir().iterdir()):
        if entry.name in _SKIP_NAMES or entry.name.startswith("."):
            continue
        if entry.is_dir():
            shutil.copytree(entry, fresh / entry.name, ignore=shutil.ignore_patterns(*_SKIP_NAMES, "*.pyc"))
        else:
            shutil.copyfile(entry, fresh / entry.name)
    for package in fresh.iterdir():
        if (package / "__init__.py").is_file():
            (package / "py.typed").write_text("", encoding="utf-8")
    for module in fresh.rglob("*.py"):
        module.write_text(HEADER + module.read_text(encoding="utf-8"), encoding="utf-8")
    stamp = {
        "written_by": f"agent-host {__version__} bindings",
        "componentize_py": COMPONENTIZE_PY_VERSION,
        "world": WORLD,
        "key": bindings_key(),
    }
    (fresh / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
    return fresh


def swap_in(fresh: Path, folder: Path, old: Path) -> None:
    """Move `fresh` to `folder`; an existing `folder` is moved to `old` first (same file system,
    so both are renames) and put back if the second rename fails."""
    had_old = folder.exists()
    if had_old:
        os.rename(folder, old)
    try:
        os.rename(fresh, folder)
    except OSError:
        if had_old and not folder.exists():
            os.rename(old, folder)
        raise


def _files(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_NAMES and not d.startswith("."))
        found += [Path(dirpath) / name for name in sorted(filenames) if not name.endswith(".pyc") and name[0] != "."]
    return found
