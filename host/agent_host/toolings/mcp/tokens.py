"""OAuth tokens of the HTTP toolings, one file per tooling, in the user's config folder.

- Folder: `$AGENT_HOST_TOKENS`, else `<user config folder>/agent-host/tokens` (`platformdirs`:
  `$XDG_CONFIG_HOME/agent-host/tokens` or `~/.config/agent-host/tokens` on Linux), mode 0700: an
  existing folder that others may read or enter is tightened to it at each write.
- `<tooling>.json`: the server URL the tokens belong to, the token response, when the access token
  expires (seconds since the epoch) and the registered client. Written whole (a temp file renamed
  over it), created with mode 0600, never readable by others even for an instant. The temp file is
  created with `O_EXCL | O_NOFOLLOW`: a file or symlink planted at its name is removed (the link
  itself, never what it points to) and the file created anew, never written through.
- Tokens stored for another URL are not used (the tooling's `url` changed: log in again).
This module never logs, prints or returns a token in a message; `Record.summary` is what may be shown.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

ENV_TOKENS: Final = "AGENT_HOST_TOKENS"
FILE_MODE: Final = 0o600
FOLDER_MODE: Final = 0o700
TEMP_ATTEMPTS: Final = 3
"""Times the temp file is created anew after finding something at its name, before giving up."""


def tokens_dir() -> Path:
    """The tokens folder (see the module docstring); it may not exist yet."""
    explicit = os.environ.get(ENV_TOKENS)
    if explicit:
        return Path(explicit)
    import platformdirs

    return Path(platformdirs.user_config_dir("agent-host", appauthor=False)) / "tokens"


@dataclass
class Record:
    """What is stored for one tooling: JSON objects as the OAuth server sent them."""

    url: str
    tokens: dict[str, Any] | None = None
    expires_at: float | None = None
    client: dict[str, Any] | None = field(default=None, repr=False)

    def __repr__(self) -> str:  # never show a token, even in a traceback
        return f"Record(url={self.url!r}, logged_in={self.tokens is not None})"

    def summary(self) -> dict[str, Any]:
        """What `auth status` shows: no token, no secret."""
        tokens = self.tokens or {}
        return {
            "url": self.url,
            "logged_in": self.tokens is not None,
            "scopes": tokens.get("scope"),
            "expires_at": self.expires_at,
            "expired": self.expires_at is not None and time.time() > self.expires_at,
            "refreshable": bool(tokens.get("refresh_token")),
            "client_id": (self.client or {}).get("client_id"),
        }


class TokenFile:
    """The token file of one tooling. `changed()` tells whether another process wrote or removed it
    since this object last read or wrote it."""

    def __init__(self, tooling: str, url: str, folder: Path | None = None) -> None:
        self.path = (folder if folder is not None else tokens_dir()) / f"{tooling}.json"
        self.url = url
        self._seen: tuple[int, int, int] | None = None

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def changed(self) -> bool:
        return self._signature() != self._seen

    def load(self) -> Record:
        """The record for this URL (an empty one when there is none, or it is for another URL)."""
        self._seen = self._signature()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return Record(self.url)
        if not isinstance(data, dict) or data.get("url") != self.url:
            return Record(self.url)
        expires = data.get("expires_at")
        return Record(
            self.url,
            data.get("tokens") if isinstance(data.get("tokens"), dict) else None,
            float(expires) if isinstance(expires, int | float) else None,
            data.get("client") if isinstance(data.get("client"), dict) else None,
        )

    def save(self, record: Record) -> None:
        """Write `record` whole, mode 0600 from the first byte."""
        _private_folder(self.path.parent)
        body = {"url": record.url, "tokens": record.tokens, "expires_at": record.expires_at, "client": record.client}
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = _create_new(temp)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                os.fchmod(out.fileno(), FILE_MODE)  # the umask may have narrowed it further, never widened
                json.dump(body, out, indent=1)
            os.replace(temp, self.path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        self._seen = self._signature()

    def remove(self) -> bool:
        """Forget this tooling's tokens; False when there were none."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        self._seen = None
        return True


def _private_folder(folder: Path) -> None:
    """Create `folder` with mode 0700, or tighten an existing one that others may use to it."""
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    mode = stat.S_IMODE(folder.stat().st_mode)
    if mode & ~FOLDER_MODE:
        os.chmod(folder, mode & FOLDER_MODE)


def _create_new(path: Path) -> int:
    """A new file at `path` (mode 0600), written by nobody else: never through a symlink or an
    existing file; what is found there is removed (a symlink itself, not its target) first."""
    for _ in range(TEMP_ATTEMPTS):
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        except FileExistsError:
            path.unlink(missing_ok=True)
    raise FileExistsError(f"{path}: something keeps appearing at the name of the token store's temp file")
