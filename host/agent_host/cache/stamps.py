"""Facts derived from a file's bytes, trusted again without reading the file while it is unchanged.

A stamp records a file's identity (size, mtime, ctime, inode) beside a value computed from its
bytes (a hash, a cache key), in `stamps/<hash of the file's path>` of the cache folder. `recall`
gives the value back only while the identity is the recorded one: any write or replacement of the
file changes its ctime or inode (which no user tool sets back), so a changed file is read again.
Stamps are written atomically; a missing, unreadable or stale stamp is never an error, just a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Final

from agent_host.cache.contents import FOLDER_MODE

STAMPS: Final = "stamps"


def _identity(path: Path) -> list[int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev]


def _stamp_file(root: Path, path: Path, kind: str) -> Path:
    digest = hashlib.sha256(f"{kind}\0{path.resolve()}".encode()).hexdigest()[:32]
    return root / STAMPS / digest


def recall(root: Path, path: Path, kind: str) -> str | None:
    """The `kind` value recorded for `path` in cache folder `root`, if `path` is unchanged since."""
    try:
        stamp = json.loads(_stamp_file(root, path, kind).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("identity") != _identity(path):
        return None
    value = stamp.get("value")
    return value if isinstance(value, str) else None


def record(root: Path, path: Path, kind: str, value: str) -> None:
    """Record `value` (of `kind`, e.g. "key") for `path` as it is now; a cache that is not writable
    is left as it is."""
    identity = _identity(path)
    if identity is None:
        return
    target = _stamp_file(root, path, kind)
    body = json.dumps({"path": str(path.resolve()), "kind": kind, "identity": identity, "value": value})
    try:
        target.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
        os.replace(tmp, target)
    except OSError:
        return


def forget_stale(root: Path) -> int:
    """Remove the stamps of files that no longer exist (or that cannot be read); their number."""
    removed = 0
    for stamp in (root / STAMPS).glob("*"):
        try:
            path = json.loads(stamp.read_text(encoding="utf-8"))["path"]
            if Path(path).exists():
                continue
        except (OSError, ValueError, KeyError, TypeError):
            pass
        try:
            stamp.unlink()
            removed += 1
        except OSError:
            pass
    return removed
