"""Where the host finds its data and keeps its caches.

- Cache folder: `$AGENT_HOST_CACHE`, else `$XDG_CACHE_HOME/agent-host`, else `~/.cache/agent-host`.
  It holds `builds/` (guest components by source hash) and `compiled/` (serialized components
  by wasm hash and engine settings). Deleting it is always safe: everything is rebuilt.
- The WIT package and the guest library: inside the installed package (`host/_data/`) when built
  as a wheel, else the source tree's `wit/` and `guests/lib/` (editable installs, checkouts).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

ENV_CACHE: Final = "AGENT_HOST_CACHE"

_PACKAGE = Path(__file__).resolve().parent
_SOURCE_ROOT = _PACKAGE.parent


def cache_dir() -> Path:
    explicit = os.environ.get(ENV_CACHE)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "agent-host"


def _data(packaged: str, source: str) -> Path:
    inside = _PACKAGE / "_data" / packaged
    return inside if inside.is_dir() else _SOURCE_ROOT / source


def wit_dir() -> Path:
    """The folder holding the `agent-host:guest` WIT package."""
    return _data("wit", "wit")


def guest_lib_dir() -> Path:
    """The folder holding the guest library (`agentlib`), put on every guest's module path."""
    return _data("guestlib", "guests/lib")
