"""Which imports of a component the host can link, checked when a component is loaded.

The host links WASI 0.2 (`Linker.add_wasip2`: io, clocks, random, cli, filesystem, sockets) and the
interfaces of `agent-host:guest` (`runtime.imports`), nothing else: a guest has no network but its
toolings. A component importing anything else fails at instantiation with wasmtime's "resource
implementation is missing", which names neither the import nor a way out; `problem` names both,
with a hint from `HINTS` by the import's package.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

PROVIDED: Final = (
    "wasi:io/",
    "wasi:clocks/",
    "wasi:random/",
    "wasi:cli/",
    "wasi:filesystem/",
    "wasi:sockets/",
    "agent-host:guest/",
)
"""Prefixes of the imports the host links (WASI at any 0.2.x version: the linker matches by semver)."""

HINTS: Final = {
    "wasi:http/": (
        "a guest has no network of its own (it reaches the outside through toolings); build a JavaScript guest "
        "with `agent-host build` (it passes `--disable http fetch-event` to componentize-js), or pass "
        "`--disable http fetch-event` to componentize-js yourself"
    ),
}
"""What to do about an import the host does not link, by the prefix of its package."""

DEFAULT_HINT: Final = "build the guest against agent-host's WIT world `agent` (`agent-host wit --path` names it)"


def _provided(name: str) -> bool:
    if not name.startswith(PROVIDED):
        return False
    version = name.partition("@")[2]
    return not name.startswith("wasi:") or not version or version.startswith("0.2.")


def unlinkable(imports: Iterable[str]) -> list[str]:
    """The names among `imports` (a component's, as wasmtime lists them) that the host does not link."""
    return [name for name in imports if not _provided(name)]


def problem(imports: Iterable[str]) -> tuple[str, str] | None:
    """(message, hint) about the imports the host cannot link, or None when it links them all."""
    missing = unlinkable(imports)
    if not missing:
        return None
    hint = next((text for prefix, text in HINTS.items() if missing[0].startswith(prefix)), DEFAULT_HINT)
    return f"imports {', '.join(missing)}, which agent-host does not provide", hint
