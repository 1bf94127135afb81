"""Where the host finds its data and keeps its caches.

- Cache folder: `$AGENT_HOST_CACHE`, else the user's cache folder for `agent-host` as `platformdirs`
  names it (`$XDG_CACHE_HOME/agent-host` or `~/.cache/agent-host` on Linux, `~/Library/Caches/
  agent-host` on macOS). It holds `builds/`, `compiled/` and, for the tests, `npm/`; `agent_host.cache`
  lists, bounds and cleans it. Deleting it is always safe: everything is rebuilt.
- The WIT package and the guest libraries: inside the installed package (`agent_host/_data/`) when built
  as a wheel, else the source tree's `wit/`, `guests/lib/` (Python) and `guests/jslib/` (JavaScript)
  (editable installs, checkouts).
- Templates (the guest written by `agent-host new`): `host/agent_host/components/templates/`, shipped in the wheel.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

ENV_CACHE: Final = "AGENT_HOST_CACHE"

_PACKAGE = Path(__file__).resolve().parents[1]
_SOURCE_ROOT = _PACKAGE.parent.parent


def cache_dir() -> Path:
    """The cache folder (see the module docstring); it may not exist yet."""
    explicit = os.environ.get(ENV_CACHE)
    if explicit:
        return Path(explicit)
    import platformdirs  # only the commands that touch the cache pay for it

    return Path(platformdirs.user_cache_dir("agent-host", appauthor=False))


def _data(packaged: str, source: str) -> Path:
    inside = _PACKAGE / "_data" / packaged
    return inside if inside.is_dir() else _SOURCE_ROOT / source


def wit_dir() -> Path:
    """The folder holding the `agent-host:guest` WIT package."""
    return _data("wit", "wit")


def guest_lib_dir() -> Path:
    """The folder holding the guest library (`agentlib`), put on every guest's module path."""
    return _data("guestlib", "guests/lib")


def js_lib_dir() -> Path:
    """The folder holding the JavaScript guest library (`agentlib.js`, bundled into every JavaScript
    guest build, and its declarations `agentlib.d.ts`)."""
    return _data("guestlib-js", "guests/jslib")


def template(name: str) -> str:
    """The text of the template file `name` in `host/agent_host/components/templates/`."""
    return (_PACKAGE / "components" / "templates" / name).read_text(encoding="utf-8")
