"""Building JavaScript guest folders into components with componentize-js, cached by content.

A JavaScript guest is a folder whose module (`app.js`, or `NAME.js`) is an ES module exporting
`run(input)` (or as its default export). The build copies the folder (no `node_modules`, nothing
hidden) beside a generated entry (`ENTRY_FILE`, `templates/js_entry.js.txt`) that turns what would
trap into an `err`: a thrown `Error` as `Name: message (at FILE:LINE:COL)`, a host import's uncaught
error as `code: message (raised at FILE:LINE:COL)`, a value that is not a string as such; a thrown
string passes through. componentize-js runs with `DISABLED_FEATURES` (no `wasi:http`). Builds are
cached by `js_build_key` (sources, not output: componentize-js's differs between two builds of the
same source). A guest whose modules import `agent-host:guest/...@V` for a released V
(`wit/released/V`) is built against that version's WIT, unchanged (`guest_wit`). Every build bundles
the guest library, importable as `LIBRARY` from any module (`_add_library`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Final

from agent_host._support import scratch
from agent_host._support.paths import js_lib_dir, template, wit_dir
from agent_host._support.progress import progress
from agent_host._support.stopping import TIMED_OUT, StopToken, run_child
from agent_host.components.build import BUILD_WORLD, WORLD, digest_files, publishing, source_files
from agent_host.components.build_limits import build_timeout, timed_out
from agent_host.components.js_toolchain import COMPONENTIZE_JS_VERSION, JCO_VERSION, toolchain
from agent_host.errors import BuildError
from agent_host.operations import PACKAGE, VERSION

ENTRY_FILE: Final = "_agent_host_entry.js"
"""The module componentize-js builds: the guest's `run`, wrapped."""
DISABLED_FEATURES: Final = ("http", "fetch-event")
"""componentize-js features left out: with them the component imports `wasi:http`, which the host
does not provide (guests reach the outside only through toolings)."""
BUILD_OUTPUT_TAIL: Final = 3000
"""Characters of componentize-js's output quoted in a build error."""
SKIPPED: Final = frozenset({"node_modules", "__pycache__", "typings"})
"""Folders of a guest folder that are not part of the guest (also hidden ones, and `.wasm` files)."""
_TEMPLATE: Final = "js_entry.js.txt"
RELEASED: Final = "released"
"""The folder of `wit/` holding the WIT of each released package version (`released/0.2.0`)."""
SPECIFIER: Final = re.compile(rf"""["']{re.escape(PACKAGE)}/[a-z][a-z0-9-]*@([0-9]+\.[0-9]+\.[0-9]+)["']""")
"""An import specifier of the package in a guest's module (`"agent-host:guest/tooling@0.2.0"`)."""
MODULE_SUFFIXES: Final = frozenset({".js", ".mjs"})
LIBRARY: Final = "agentlib"
"""The bare specifier of the guest library (`import { agent } from "agentlib"`), and its file name in a build."""
LIBRARY_FILE: Final = "agentlib.js"
"""The library's file in `paths.js_lib_dir()`."""
LIBRARY_IMPORT: Final = re.compile(rf"""(?:\bfrom|\bimport)\s*\(?\s*["']{LIBRARY}["']""")
"""An import of the library in a guest's module (`from "agentlib"`, `import "agentlib"`, `import("agentlib")`)."""
_EVALUATION_FAILED: Final = "Exception while evaluating top-level script"
"""What componentize-js prints before the error that loading the guest's modules raised."""


def js_module(folder: Path, module: str | None = None) -> str:
    """The file name of `folder`'s module exporting `run`: `app.js`, or `MODULE.js` for `module`.
    Raises `BuildError` when it is not there."""
    name = f"{module.removesuffix('.js')}.js" if module else "app.js"
    if not (folder / name).is_file():
        hint = "a JavaScript guest is a folder with app.js (or --module NAME)"
        raise BuildError(f"{folder}: no module {name}", hint=hint)
    if name == ENTRY_FILE:
        raise BuildError(f"{folder}: {ENTRY_FILE} is the name of the entry agent-host generates; rename the module")
    return name


DESCRIBE: Final = """
// The world `described-agent`: the JSON Schema of the input, when `agent(fn, { inputSchema })` gave one.
export function describe() {
  try {
    return guestRun.inputSchema === undefined ? undefined : JSON.stringify(guestRun.inputSchema);
  } catch {
    return undefined;
  }
}
"""
"""The entry's `describe` export, for a guest built against the current WIT (world `described-agent`)."""


def entry_source(module: str, *, described: bool = True) -> str:
    """The generated entry module for a guest whose `run` is exported by `module` (a file name);
    `described`: it also exports `describe` (built against the world `described-agent`)."""
    text = template(_TEMPLATE).replace("__MODULE__", module).replace("__ENTRY__", ENTRY_FILE)
    return text.replace("__LIBRARY__", LIBRARY).replace("__DESCRIBE__", DESCRIBE if described else "")


def build_world(folder: Path) -> tuple[Path, str]:
    """The WIT folder and world to build `folder` against: the current package's `described-agent`,
    or a released version's `agent` (`guest_wit`)."""
    wit = guest_wit(folder)
    return wit, BUILD_WORLD if wit == wit_dir() else WORLD


def _guest_files(folder: Path) -> list[Path]:
    return list(source_files(folder, SKIPPED))


def guest_wit(folder: Path) -> Path:
    """The WIT folder to build `folder` against: the current package, or the released version its
    modules import (`wit/released/V`); a module importing the library imports the current one.
    Raises `BuildError` for two versions, or one not released."""
    versions: set[str] = set()
    for path in _guest_files(folder):
        if path.suffix in MODULE_SUFFIXES:
            text = path.read_text(encoding="utf-8", errors="replace")
            versions.update(SPECIFIER.findall(text))
            if LIBRARY_IMPORT.search(text):
                versions.add(VERSION)
    if versions <= {VERSION}:
        return wit_dir()
    released = wit_dir() / RELEASED
    if len(versions) > 1 or not (released / next(iter(versions))).is_dir():
        raise BuildError(
            f"{folder} imports {PACKAGE} at {', '.join(sorted(versions))}: a guest imports one version this "
            "host builds against",
            hint=f"import the current {PACKAGE}/...@{VERSION} (or a released one: "
            f"{', '.join(sorted(p.name for p in released.iterdir())) or 'none'}) in every module",
        )
    return released / next(iter(versions))


def js_build_key(folder: Path, module: str) -> str:
    """sha256 of the guest's files (path and bytes; `SKIPPED` and hidden entries left out), the WIT
    package, the guest library, the entry module, the build's features and the componentize-js and
    jco versions."""
    digest = hashlib.sha256()
    _, world = build_world(folder)
    header = f"componentize-js {COMPONENTIZE_JS_VERSION}\0jco {JCO_VERSION}\0module {module}\0world {world}\0"
    digest.update(f"{header}disable {' '.join(DISABLED_FEATURES)}\0".encode())
    digest.update(entry_source(module, described=world == BUILD_WORLD).encode())
    digest_files(digest, "guest", folder, _guest_files(folder))
    digest_files(digest, "wit", wit_dir(), sorted(wit_dir().rglob("*.wit")))
    digest_files(digest, "lib", js_lib_dir(), [js_lib_dir() / LIBRARY_FILE])
    return digest.hexdigest()[:24]


def build_js_into(folder: Path, module: str, target: Path, stop: StopToken | None, what: str) -> None:
    """Run componentize-js on a copy of `folder` with the entry module, and publish the result as
    `target`. Raises `BuildError` whose first line is the cause (the error that loading the
    guest's modules raised, with its file and line) followed by the tail of the output."""
    tools = toolchain(stop)
    work = scratch.make("js-build-")
    try:
        source = work / folder.name
        _copy_guest(folder, source)
        _add_library(folder, source)
        wit, world = build_world(folder)
        (source / ENTRY_FILE).write_text(entry_source(module, described=world == BUILD_WORLD), encoding="utf-8")
        with publishing(target, folder) as output_file:
            command = [str(tools.node), str(tools.componentize_js), ENTRY_FILE, "--wit", str(wit)]
            command += ["--world-name", world, "--disable", *DISABLED_FEATURES, "--out", str(output_file)]
            # componentize-js makes its own temp folder: inside `work`, so a stopped build leaves none.
            env = {**os.environ, "TMPDIR": str(work)}
            with progress(what):
                limit = build_timeout()
                returncode, output = run_child(command, stop, what, cwd=source, env=env, timeout=limit)
                if returncode == TIMED_OUT:
                    raise timed_out(folder, limit)
                if returncode != 0 or output_file.stat().st_size == 0:
                    raise BuildError(
                        f"building {folder} failed: {failure_cause(output, returncode)}\n{failure_text(output)}"
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _copy_guest(folder: Path, source: Path) -> None:
    """Copy the guest's files into `source`. Raises `BuildError` naming a file that is a symbolic
    link to a file outside `folder`: its content would be built into the guest (and quoted in
    build errors)."""
    root = folder.resolve()
    source.mkdir(parents=True)
    for path in _guest_files(folder):
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            raise BuildError(
                f"{path}: a symbolic link to {path.resolve()}, outside the guest folder; its content would be built "
                "into the guest",
                hint="copy the file into the folder instead of linking to it",
            )
        copy = source / path.relative_to(folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)


def _add_library(folder: Path, source: Path) -> None:
    """Make `LIBRARY` resolve from every module of the copy `source`: the library as the file
    `source/agentlib`, and in each subfolder holding modules a file `agentlib` re-exporting it (one
    module instance for all). StarlingMonkey resolves a specifier that is no builtin module as a path
    relative to the importing module's folder, so a bare name needs a file of that name beside each
    importer. Raises `BuildError` when the guest has an entry of that name where one is written."""
    folders = {source} | {path.parent for path in source.rglob("*") if path.suffix in MODULE_SUFFIXES}
    for place in sorted(folders):
        target = place / LIBRARY
        if target.exists() or target.is_symlink():
            raise BuildError(
                f"{folder / target.relative_to(source)}: {LIBRARY} is the name of the library agent-host bundles "
                f'into every JavaScript guest (import {{ agent }} from "{LIBRARY}")',
                hint="rename the file or folder",
            )
        if place == source:
            shutil.copyfile(js_lib_dir() / LIBRARY_FILE, target)
        else:
            up = "../" * len(place.relative_to(source).parts)
            target.write_text(f'export * from "{up}{LIBRARY}";\n', encoding="utf-8")


def failure_cause(output: str, returncode: int) -> str:
    """The line of componentize-js's output that says why the build failed: the error loading the
    guest's modules raised (`app.js:2:15 SyntaxError: ...`), else the last `Error:` line."""
    lines = [line.rstrip() for line in output.splitlines()]
    if _EVALUATION_FAILED in lines:
        after = lines[lines.index(_EVALUATION_FAILED) + 1 :]
        if after and after[0].strip():
            return after[0].strip()
    errors = [line for line in lines if line.startswith("Error: ")]
    return errors[-1] if errors else f"componentize-js exit {returncode}"


def failure_text(output: str) -> str:
    """What componentize-js said about the failure, without node's frames of componentize-js itself
    (`    at ...` lines, the source line of its `throw`): the `Error:` line and what follows it."""
    lines = output.strip().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Error: ")), 0)
    kept = [line for line in lines[start:] if not line.startswith("    at ") and not line.startswith("Node.js v")]
    return "\n".join(kept).strip()[-BUILD_OUTPUT_TAIL:]
