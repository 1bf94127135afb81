"""The process's own temporary folder: every temporary folder the host makes is made inside it.

`make(prefix)` makes a folder in `folder()`, `$TMPDIR/agent-host-<pid>-XXXXXXXX`, created on first
use with `.owner`, a file the process keeps locked (`flock`) for its life. Whoever makes a folder
removes it when done; whatever way the process ends, all of `folder()` goes too: `atexit` at a
normal exit; `remove` before every `os._exit` of the command line (`cli.root.entry`, a second
signal, an early Ctrl-C); and after an end where nothing can run (SIGKILL, the OOM killer), the next
process of the same user that creates its folder removes every `agent-host-*` folder whose `.owner`
no process holds locked (the kernel drops a lock with its process: a folder in use is never
touched, a reused pid does not matter). `remove` is idempotent and does nothing in a forked child;
folders without an `.owner` (older versions) are left alone.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Final

PREFIX: Final = "agent-host-"
"""How the folders of agent-host processes are named in the temporary folder."""

OWNER: Final = ".owner"
"""The file of a process's folder that it keeps locked while it lives."""

_lock = threading.Lock()
_folder: Path | None = None
_owner_fd: int | None = None
_owner_pid: int | None = None


def folder() -> Path:
    """This process's temporary folder, created (and the folders of ended processes removed) on
    first use."""
    global _folder, _owner_fd, _owner_pid
    with _lock:
        if _folder is not None and _owner_pid == os.getpid():
            return _folder
        made = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        fd = os.open(made / f"{OWNER}.new", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(made / f"{OWNER}.new", made / OWNER)  # only a locked `.owner` is ever seen
        _folder, _owner_fd, _owner_pid = made, fd, os.getpid()
        atexit.register(remove)
    sweep(made.parent, keep=made)
    return made


def make(prefix: str) -> Path:
    """A fresh folder named `prefix...` inside `folder()`; the caller removes it when done."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=folder()))


def remove() -> None:
    """Remove this process's folder and everything in it (idempotent; nothing in a forked child)."""
    global _folder, _owner_fd
    made, fd = _folder, _owner_fd
    if made is None or _owner_pid != os.getpid():
        return
    _folder, _owner_fd = None, None
    shutil.rmtree(made, ignore_errors=True)
    if fd is not None:
        os.close(fd)


def sweep(parent: Path, keep: Path | None = None) -> list[Path]:
    """Remove the folders of ended agent-host processes in `parent` (their `.owner` unlocked);
    return them. Another user's folders, and folders still in use, are never touched."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIX) or entry == keep:
            continue
        try:
            if entry.is_symlink() or not entry.is_dir() or entry.stat().st_uid != os.getuid():
                continue
            fd = os.open(entry / OWNER, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # no `.owner` (not such a folder, or being made): not ours to judge
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its process lives
            os.close(fd)
            continue
        shutil.rmtree(entry, ignore_errors=True)
        os.close(fd)
        removed.append(entry)
    return removed
