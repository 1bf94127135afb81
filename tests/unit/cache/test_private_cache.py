"""The cache folder is its user's alone: the host makes it and its folders with mode 0700 whatever the
umask, and refuses (exit 2, a hint naming the fix) a cache folder, or a folder of it holding what the
host trusts, that another user may write in (group or world) or that another user owns; a folder of
the user's (or root's) that nobody else may write in is used as it is, a read-only one included.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host import cache, errors
from agent_host.errors import HostError
from agent_host.runtime.engine import Runtime
from tests.support import in_process
from tests.support.modes import mode, umask

LAYOUT = ("builds", "compiled", "stamps", "locks")
"""The folders every host using the cache makes in it."""

NOBODY = 65534
"""A user id that is not the test's (`nobody`)."""


@pytest.fixture
def runtimes() -> Iterator[list[Runtime]]:
    """Runtimes a test made; closed afterwards (their ticker threads end)."""
    made: list[Runtime] = []
    yield made
    for runtime in made:
        runtime.close()


def owned_by_nobody(folder: Path) -> None:
    """Give `folder` to another user, or skip: only root may."""
    try:
        os.chown(folder, NOBODY, NOBODY)
    except PermissionError:
        pytest.skip("giving a folder to another user needs root")


def test_a_new_cache_and_its_folders_are_the_users_alone_whatever_the_umask(
    tmp_path: Path, runtimes: list[Runtime]
) -> None:
    root = tmp_path / "cache"
    with umask(0):
        runtimes.append(Runtime(root))
    assert [mode(root / name) for name in ("", *LAYOUT)] == [0o700] * 5


@pytest.mark.parametrize("loose", [0o777, 0o770, 0o1777, 0o720])
def test_a_cache_folder_others_may_write_in_is_refused_naming_the_fix(
    tmp_path: Path, runtimes: list[Runtime], loose: int
) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(loose)
    with pytest.raises(HostError) as refused:
        runtimes.append(Runtime(root))
    assert isinstance(refused.value, errors.UnsafeCacheError)
    shown = f"{loose:04o}"
    assert refused.value.message == (
        f"cache folder {root} is writable by others (mode {shown}): agent-host runs native code compiled into it"
    )
    assert refused.value.hint == f"chmod 700 {root}, or set AGENT_HOST_CACHE to a folder of your own"
    assert refused.value.exit_code == 2
    assert list(root.iterdir()) == []  # nothing made in it


@pytest.mark.parametrize("name", LAYOUT)
def test_a_folder_of_the_cache_others_may_write_in_is_refused(
    tmp_path: Path, runtimes: list[Runtime], name: str
) -> None:
    root = tmp_path / "cache"
    (root / name).mkdir(parents=True)
    root.chmod(0o700)
    (root / name).chmod(0o777)
    with pytest.raises(HostError, match=f"cache folder {root / name} is writable by others"):
        runtimes.append(Runtime(root))


def test_a_deeper_folder_the_host_trusts_is_made_private_and_checked_from_the_cache_folder_down(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cache"
    with umask(0):
        made = cache.private_folder(root, "npm", "js-guests")
    assert [mode(folder) for folder in (root, root / "npm", made)] == [0o700] * 3
    (root / "dev-runner" / "v1").mkdir(parents=True)
    (root / "dev-runner").chmod(0o777)
    with pytest.raises(HostError, match=f"cache folder {root / 'dev-runner'} is writable by others"):
        cache.private_folder(root, "dev-runner", "v1", "dev-runner")
    assert not (root / "dev-runner" / "v1" / "dev-runner").exists()


def test_the_command_line_refuses_it_with_exit_code_2_and_the_hint(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(0o777)
    (tmp_path / "x.wasm").write_bytes(b"")
    done = in_process.run("run", "x.wasm", cwd=tmp_path, env={"AGENT_HOST_CACHE": str(root)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"agent-host: error: cache folder {root} is writable by others (mode 0777): "
        "agent-host runs native code compiled into it",
        f"  hint: chmod 700 {root}, or set AGENT_HOST_CACHE to a folder of your own",
    ]


def test_a_cache_folder_owned_by_another_user_is_refused(tmp_path: Path, runtimes: list[Runtime]) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o755)
    owned_by_nobody(root)
    with pytest.raises(HostError) as refused:
        runtimes.append(Runtime(root))
    assert refused.value.message.startswith(
        f"cache folder {root} is owned by another user (uid {NOBODY}; agent-host runs as uid {os.geteuid()})"
    )
    assert (
        refused.value.hint == f"remove {root} (the cache is rebuilt), or set AGENT_HOST_CACHE to a folder of your own"
    )


def test_a_folder_of_the_cache_owned_by_another_user_is_refused(tmp_path: Path, runtimes: list[Runtime]) -> None:
    root = tmp_path / "cache"
    (root / "compiled").mkdir(parents=True, mode=0o755)
    owned_by_nobody(root / "compiled")
    with pytest.raises(HostError, match=f"cache folder {root / 'compiled'} is owned by another user"):
        runtimes.append(Runtime(root))


def test_a_folder_of_the_users_that_nobody_else_may_write_is_used_as_it_is(
    tmp_path: Path, runtimes: list[Runtime]
) -> None:
    shared = tmp_path / "readable"  # AGENT_HOST_CACHE naming an existing folder others may read
    shared.mkdir()
    shared.chmod(0o755)
    runtimes.append(Runtime(shared))
    assert mode(shared) == 0o755  # not changed
    assert [mode(shared / name) for name in LAYOUT] == [0o700] * 4  # what the host makes is private
    read_only = tmp_path / "read-only"  # a cache prepared once, used without writing
    for name in LAYOUT:
        (read_only / name).mkdir(parents=True)
    for folder in [read_only / name for name in LAYOUT] + [read_only]:
        folder.chmod(0o555)
    runtimes.append(Runtime(read_only))
    assert [mode(read_only / name) for name in ("", *LAYOUT)] == [0o555] * 5


def test_a_folder_owned_by_root_is_trusted_by_any_user(monkeypatch: pytest.MonkeyPatch) -> None:
    root_owned = Path("/")
    assert os.stat(root_owned).st_uid == 0 and not mode(root_owned) & 0o022
    monkeypatch.setattr(os, "geteuid", lambda: 4242)
    cache.private.check(root_owned)  # root can change any file anyway: trusting its folder adds nobody


def test_a_cache_inside_a_folder_others_may_write_in_is_refused_unless_it_is_sticky(tmp_path: Path) -> None:
    """Another user could rename the cache away and put their own folder in its place, unless the
    folder above has the sticky bit (as /tmp has)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(HostError) as refused:
        cache.private_cache(shared / "cache")
    assert f"is inside {shared}, which others may write in (mode 0777) without the sticky bit" in (
        refused.value.message
    )
    os.chmod(shared, 0o1777)
    assert cache.private_cache(shared / "cache").is_dir()
