"""What a component may import: each import name resolved as wasmtime's linker resolves it, against
one table of what the host provides (`PROVIDED`), before the component is accepted.

wasmtime (`NameMap::get`) takes an import by its exact name, else by its semver track (`@1.2.3+b`
by any `@1.x.y`, `@0.2.3` by any `@0.2.x`; a pre-release or `0.0.x` by its exact name only; build
metadata never matters): `track` does the same, so an import resolves here exactly when the host's
linker could serve it, whatever its spelling; `problem` names those that do not. Invariant (tested):
every interface that can wait for time or the host is the host's own; `runtime.clock` serves WASI's
clock under every name that could reach it (`imports_of`). WASI's own functions wait only on
pollables, all ready when made in the sandbox; a wait in the OS (a named pipe in a granted folder)
is the backstop's (`runtime.guest.ABANDON_AFTER`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final


class Serves(enum.Enum):
    """Who serves an interface: wasmtime's WASI implementation, or the host's own functions."""

    WASI = "wasi"
    HOST = "host"


class Waits(enum.Enum):
    """Whether calling an interface's functions can make the guest's thread wait."""

    NEVER = "never"
    """Every function returns at once."""
    POLLABLES = "pollables"
    """Waits only on pollables (`poll`, `block`, blocking stream operations): see the module docstring."""
    FILES = "files"
    """File operations: may wait on a special file (a named pipe) in a folder the operator granted."""
    BOUNDED = "bounded"
    """Waits for time to pass or for the host (timers, tool calls, the inbox): must be the host's
    own, which ends every such wait at the run's stop or deadline."""


@dataclass(frozen=True)
class Provided:
    """One interface the host's linker defines, on one semver track."""

    serves: Serves
    waits: Waits


WASI_TRACK: Final = "0.2"
"""The WASI track `Linker.add_wasip2` defines (wasmtime 50: WASI 0.2.12)."""

GUEST_PACKAGE: Final = "agent-host:guest"
GUEST_TRACKS: Final[Mapping[str, tuple[str, ...]]] = {
    "0.2": ("types", "tooling", "inbox", "log"),
    "0.3": ("types", "tooling", "inbox", "log", "provider"),
}
"""The tracks of `agent-host:guest` the host defines (`runtime.imports`: versions 0.2.0 and 0.3.0)
and the interfaces of each."""

CLOCK: Final = "wasi:clocks/monotonic-clock"
"""The interface whose timers the host serves (`runtime.clock`)."""

_WASI: Final[Mapping[str, Waits]] = {
    "wasi:io/error": Waits.NEVER,
    "wasi:io/poll": Waits.POLLABLES,
    "wasi:io/streams": Waits.POLLABLES,
    "wasi:clocks/wall-clock": Waits.NEVER,
    "wasi:random/random": Waits.NEVER,
    "wasi:random/insecure": Waits.NEVER,
    "wasi:random/insecure-seed": Waits.NEVER,
    "wasi:cli/environment": Waits.NEVER,
    "wasi:cli/exit": Waits.NEVER,
    "wasi:cli/stdin": Waits.NEVER,
    "wasi:cli/stdout": Waits.NEVER,
    "wasi:cli/stderr": Waits.NEVER,
    "wasi:cli/terminal-input": Waits.NEVER,
    "wasi:cli/terminal-output": Waits.NEVER,
    "wasi:cli/terminal-stdin": Waits.NEVER,
    "wasi:cli/terminal-stdout": Waits.NEVER,
    "wasi:cli/terminal-stderr": Waits.NEVER,
    "wasi:filesystem/types": Waits.FILES,
    "wasi:filesystem/preopens": Waits.NEVER,
    "wasi:sockets/network": Waits.NEVER,
    "wasi:sockets/instance-network": Waits.NEVER,
    "wasi:sockets/udp": Waits.POLLABLES,
    "wasi:sockets/udp-create-socket": Waits.NEVER,
    "wasi:sockets/tcp": Waits.POLLABLES,
    "wasi:sockets/tcp-create-socket": Waits.NEVER,
    "wasi:sockets/ip-name-lookup": Waits.POLLABLES,
}
"""The interfaces of WASI 0.2 that wasmtime serves (deny-all: `runtime.guest._wasi`), by whether they wait."""

_GUEST: Final[Mapping[str, Waits]] = {
    "types": Waits.NEVER,
    "tooling": Waits.BOUNDED,
    "inbox": Waits.BOUNDED,
    "log": Waits.NEVER,
    "provider": Waits.BOUNDED,
}
"""The interfaces of `agent-host:guest` (`runtime.imports`; `types` declares types only)."""

PROVIDED: Final[Mapping[tuple[str, str], Provided]] = {
    **{(name, WASI_TRACK): Provided(Serves.WASI, waits) for name, waits in _WASI.items()},
    (CLOCK, WASI_TRACK): Provided(Serves.HOST, Waits.BOUNDED),
    **{
        (f"{GUEST_PACKAGE}/{name}", track): Provided(Serves.HOST, _GUEST[name])
        for track, names in GUEST_TRACKS.items()
        for name in names
    },
}
"""Everything the host's linker defines, by (interface, semver track): the one table of what a
component may import."""

HINTS: Final = {
    "wasi:http/": (
        "a guest has no network of its own (it reaches the outside through toolings); build a JavaScript guest "
        "with `agent-host build` (it passes `--disable http fetch-event` to componentize-js), or pass "
        "`--disable http fetch-event` to componentize-js yourself"
    ),
}
"""What to do about an import the host does not link, by the prefix of its package."""

DEFAULT_HINT: Final = "build the guest against agent-host's WIT world `agent` (`agent-host wit --path` names it)"

MAX_NAMED: Final = 8
"""Imports named in one refusal (a component may list thousands)."""

MAX_NAME_SHOWN: Final = 120
"""Characters of one import name shown in a refusal."""

_NUMBER: Final = r"(?:0|[1-9][0-9]*)"
_IDENTIFIER: Final = r"[0-9A-Za-z-]+"
_PRE_IDENTIFIER: Final = rf"(?:{_NUMBER}|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
SEMVER: Final = re.compile(
    rf"({_NUMBER})\.({_NUMBER})\.({_NUMBER})"
    rf"(?:-({_PRE_IDENTIFIER}(?:\.{_PRE_IDENTIFIER})*))?"
    rf"(?:\+({_IDENTIFIER}(?:\.{_IDENTIFIER})*))?",
    re.ASCII,
)
"""A version as the Rust `semver` crate parses it (no leading zeros, no `v`, nothing around it)."""

_U64: Final = 2**64
"""Version numbers are `u64` in the `semver` crate: a larger one does not parse."""


def track(name: str) -> tuple[str, str] | None:
    """(interface, track) of the import `name` as wasmtime's linker looks it up when no definition
    has exactly that name; None when it takes exact names only (no version, a version that is not
    semver, a pre-release, `0.0.x`). `wasi:io/poll@0.2.0+x` -> (`wasi:io/poll`, `0.2`)."""
    interface, at, version = name.partition("@")  # the first `@`, as wasmtime's `find('@')`
    if not at:
        return None
    found = SEMVER.fullmatch(version)
    if found is None:
        return None
    major, minor, _patch, pre, _build = found.groups()
    if any(int(number) >= _U64 for number in found.groups()[:3]) or pre is not None:
        return None
    if major != "0":
        return interface, major
    if minor != "0":
        return interface, f"0.{minor}"
    return None


def resolve(name: str) -> Provided | None:
    """What serves the import `name` (see `track`); None when the host provides nothing under it."""
    key = track(name)
    return PROVIDED.get(key) if key is not None else None


def imports_of(names: Iterable[str], interface: str) -> list[str]:
    """The import names among `names` that wasmtime could resolve to `interface` at any version:
    every name that is `interface` followed by `@` and anything (a superset: the names of other
    versions are refused at load, `problem`)."""
    return [name for name in names if name.startswith(f"{interface}@")]


def unlinkable(imports: Iterable[str]) -> list[str]:
    """The names among `imports` (a component's, as wasmtime lists them) that the host does not provide."""
    return [name for name in imports if resolve(name) is None]


def problem(imports: Iterable[str]) -> tuple[str, str] | None:
    """(message, hint) naming the imports the host does not provide, or None when it provides them all."""
    missing = unlinkable(imports)
    if not missing:
        return None
    hint = next((text for prefix, text in HINTS.items() if missing[0].startswith(prefix)), DEFAULT_HINT)
    shown = ", ".join(_shown(name) for name in missing[:MAX_NAMED])
    more = f" and {len(missing) - MAX_NAMED} more" if len(missing) > MAX_NAMED else ""
    return f"imports {shown}{more}, which agent-host does not provide", hint


def _shown(name: str) -> str:
    if len(name) <= MAX_NAME_SHOWN:
        return name
    return f"{name[: MAX_NAME_SHOWN - 3]}... ({len(name)} characters)"
