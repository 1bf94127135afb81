"""The cache folder is its user's alone: it holds native code the host loads, trusted on a checksum beside it.

`private_cache(root)` makes the cache folder and its folders of `LAYOUT` (mode 0700) where missing,
and checks each; `private_folder(root, *parts)` does so for every folder from `root` down to a deeper
one (`npm/<prefix>`, `dev-runner/...`). A folder passes when it is owned by the process's effective
user (or by root, who can change any file anyway) and no other user may write in it (neither group
nor world write bits); else `UnsafeCacheError` (exit 2) names it and the fix. Checked once, before
anything in it is trusted: only its owner could loosen a folder that passed. A folder that cannot be
made (a read-only cache) is left missing, for its users to fall back as they do when they cannot write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from agent_host.cache.contents import BUILDS, COMPILED, FOLDER_MODE, LOCKS
from agent_host.cache.stamps import STAMPS
from agent_host.errors import UnsafeCacheError

OTHERS_WRITE: Final = stat.S_IWGRP | stat.S_IWOTH
"""Permission bits that let users other than the owner write in a folder: refused on every cache folder."""

LAYOUT: Final = (BUILDS, COMPILED, STAMPS, LOCKS)
"""The folders of the cache that hold what a host trusts (builds, compiled native code, facts about
them) or locks: made and checked with the cache folder."""

ROOT_UID: Final = 0
"""The owner accepted besides the effective user: root can replace any file of the user anyway."""

_ELSEWHERE: Final = "set AGENT_HOST_CACHE to a folder of your own"


def private_cache(root: Path) -> Path:
    """`root`, the cache folder, and each folder of `LAYOUT` in it: made (mode 0700) where missing and
    checked (see the module), and every folder above it too (`check_above`). Raises `UnsafeCacheError`."""
    _private(root, parents=True)
    check_above(root)
    for name in LAYOUT:
        _private(root / name)
    return root


def private_folder(root: Path, *parts: str) -> Path:
    """`root / parts[0] / parts[1] ...`: each folder from the cache folder `root` down to it made (mode
    0700) where missing and checked (see the module). Raises `UnsafeCacheError`."""
    folder = root
    _private(folder, parents=True)
    for part in parts:
        folder = folder / part
        _private(folder)
    return folder


def check(folder: Path) -> None:
    """`UnsafeCacheError` unless `folder` is a folder owned by this process's effective user (or root)
    that no other user may write in; nothing when it does not exist (nothing in it is trusted)."""
    try:
        info = os.stat(folder)  # a link to a folder is judged by the folder it names
    except OSError:  # missing, or not reachable: nothing can be read through this path either
        return
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeCacheError(
            f"cache folder {folder} is not a folder", hint=f"remove it (the cache is rebuilt), or {_ELSEWHERE}"
        )
    user = os.geteuid()
    if info.st_uid not in (user, ROOT_UID):
        raise UnsafeCacheError(
            f"cache folder {folder} is owned by another user (uid {info.st_uid}; agent-host runs as uid {user}): "
            "agent-host runs native code compiled into it",
            hint=f"remove {folder} (the cache is rebuilt), or {_ELSEWHERE}",
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & OTHERS_WRITE:
        raise UnsafeCacheError(
            f"cache folder {folder} is writable by others (mode {mode:04o}): "
            "agent-host runs native code compiled into it",
            hint=f"chmod 700 {folder}, or {_ELSEWHERE}",
        )


def check_above(root: Path) -> None:
    """`UnsafeCacheError` unless every folder above the cache folder `root` (up to `/`) is owned by
    this process's effective user or root and, unless its sticky bit is set (`/tmp`: others cannot
    rename what is not theirs), no other user may write in it: else another user could put a folder
    of their own in the cache's place."""
    try:
        real = root.resolve()
    except OSError:
        return
    user = os.geteuid()
    for folder in real.parents:
        try:
            info = os.stat(folder)
        except OSError:
            return
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid not in (user, ROOT_UID):
            raise UnsafeCacheError(
                f"cache folder {root} is inside {folder}, which another user owns (uid {info.st_uid}): "
                "agent-host runs native code compiled into its cache",
                hint=_ELSEWHERE,
            )
        if mode & OTHERS_WRITE and not mode & stat.S_ISVTX:
            raise UnsafeCacheError(
                f"cache folder {root} is inside {folder}, which others may write in (mode {mode:04o}) without the "
                "sticky bit: another user could put their folder in the cache's place",
                hint=f"chmod go-w {folder} (or chmod +t), or {_ELSEWHERE}",
            )


def _private(folder: Path, *, parents: bool = False) -> None:
    """Make `folder` (mode 0700) when it is missing, then `check` it."""
    try:
        folder.mkdir(mode=FOLDER_MODE, parents=parents)
    except OSError:  # there already; or a read-only cache, whose users fall back as when they cannot write
        pass
    check(folder)
