"""Building guest folders into components with componentize-py, cached by content.

A guest folder holds the module that defines `class WitWorld(wit_world.WitWorld)`: `app.py`, or
the only top-level `.py` file, or the module named with `--module`. The folder and the guest library
(`agentlib`) are on the guest's module path; pure-Python packages copied into the folder work too.

Contract:
- The output is cached as `builds/<folder name>-<key>.wasm` under the cache folder, where key =
  sha256 of every source file of the folder (path and bytes; caches, bindings and `.wasm` files
  excluded), the WIT package, the guest library, the module name and the componentize-py version.
  An unchanged guest is never rebuilt; any change rebuilds it. Writes are atomic.
- componentize-py runs as a child process of the host's own Python (no PATH lookup), with a
  progress line on stderr (a build takes 10-20 s and ~400 MB of memory).
- A failed build raises `BuildError` with the tail of componentize-py's output (the Python error in
  the guest, usually). Nothing is cached for it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from host.errors import BuildError
from host.paths import cache_dir, guest_lib_dir, wit_dir
from host.progress import progress

WORLD: Final = "agent"
COMPONENTIZE_PY_VERSION: Final = importlib.metadata.version("componentize-py")
BUILD_OUTPUT_TAIL: Final = 3000
"""Characters of componentize-py's output quoted in a build error."""

_SKIP_DIRS: Final = {"__pycache__", "wit_world", "componentize_py_async_support", ".mypy_cache", ".ruff_cache"}
_SKIP_SUFFIXES: Final = (".pyc", ".wasm", ".cwasm")
_RUNNER: Final = "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())"


def guest_module(folder: Path, module: str | None = None) -> str:
    """The module of `folder` that defines `WitWorld`."""
    if module:
        if not (folder / f"{module}.py").is_file() and not (folder / module / "__init__.py").is_file():
            raise BuildError(f"{folder}: no module {module!r} ({module}.py or {module}/__init__.py)")
        return module
    if (folder / "app.py").is_file():
        return "app"
    candidates = sorted(p.stem for p in folder.glob("*.py"))
    if len(candidates) == 1:
        return candidates[0]
    raise BuildError(
        f"{folder}: cannot tell which module defines WitWorld (found {', '.join(candidates) or 'no .py files'})",
        hint="name it app.py, or pass --module NAME",
    )


def _source_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for filename in sorted(filenames):
            if not filename.endswith(_SKIP_SUFFIXES) and not filename.startswith("."):
                yield Path(dirpath) / filename


def build_key(folder: Path, module: str) -> str:
    digest = hashlib.sha256()
    digest.update(f"componentize-py {COMPONENTIZE_PY_VERSION}\0module {module}\0world {WORLD}\0".encode())
    for label, root in (("guest", folder), ("wit", wit_dir()), ("lib", guest_lib_dir())):
        for path in _source_files(root):
            digest.update(f"{label}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def build_guest(folder: Path, *, module: str | None = None, force: bool = False) -> Path:
    """The component built from `folder`, from the cache when its sources are unchanged."""
    folder = folder.resolve()
    if not folder.is_dir():
        raise BuildError(f"{folder}: not a guest folder", hint="pass a folder holding app.py, or a .wasm file")
    name = guest_module(folder, module)
    key = build_key(folder, name)
    target = cache_dir() / "builds" / f"{folder.name}-{key}.wasm"
    if target.is_file() and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".wasm")
    os.close(fd)
    tmp = Path(tmp_name)
    command = [
        sys.executable, "-c", _RUNNER,
        "-d", str(wit_dir()), "-w", WORLD,
        "componentize", name,
        "-p", str(folder), "-p", str(guest_lib_dir()),
        "-o", str(tmp),
    ]  # fmt: skip
    try:
        with progress(f"building guest {folder.name} with componentize-py {COMPONENTIZE_PY_VERSION}"):
            done = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip()[-BUILD_OUTPUT_TAIL:]
            raise BuildError(f"building {folder} failed (componentize-py exit {done.returncode}):\n{output}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def resolve_component(spec: Path, *, module: str | None = None) -> Path:
    """A `.wasm` path as is; a guest folder built (or taken from the cache)."""
    if spec.is_dir():
        return build_guest(spec, module=module)
    if spec.is_file():
        return spec
    raise BuildError(f"{spec}: no such guest folder or .wasm file")


def copy_to(built: Path, output: Path) -> Path:
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, output)
    return output
