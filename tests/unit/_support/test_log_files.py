"""Files the host writes: bounded, private when they may hold secrets, never written through a planted link.

The audit log is rotated at its size bound and readable by its user alone once it records arguments;
every log has a default bound; the token folder is tightened to 0700 and a symlink planted at the token
temp file's name is not followed.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host.config import parse_config
from agent_host.session.audit_log import AuditLog
from agent_host.toolings.mcp.tokens import Record, TokenFile


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The umask of most systems (022): files are created readable by everyone unless asked otherwise."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def record(log: AuditLog, n: int) -> None:
    log.record(
        agent="a", tooling="t", operation="call-tool", target="echo", argument_bytes=10, outcome="ok", duration=0.1,
        arguments=json.dumps({"n": n, "secret": "s3cr3t"}),
    )  # fmt: skip


def test_an_audit_log_recording_arguments_is_created_readable_by_its_user_alone(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, include_arguments=True)
    record(log, 1)
    log.close()
    assert mode(path) == 0o600


def test_an_existing_audit_log_is_tightened_once_it_records_arguments(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("")
    path.chmod(0o644)
    AuditLog(path, include_arguments=True).close()
    assert mode(path) == 0o600


def test_an_audit_log_without_arguments_keeps_the_usual_mode(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    AuditLog(path).close()
    assert mode(path) == 0o644


def test_the_audit_log_is_rotated_at_audit_log_max_keeping_audit_log_keep_files(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    text = '[host]\naudit_log = "audit.jsonl"\naudit_log_max = "2KiB"\naudit_log_keep = 2\n'
    from agent_host._support.rotation import LogBounds

    settings = parse_config(text, folder / "agent-host.toml").host
    assert (settings.audit_log_max, settings.audit_log_keep) == (2048, 2)
    assert settings.audit_log is not None
    log = AuditLog(settings.audit_log, bounds=LogBounds(settings.audit_log_max, settings.audit_log_keep))
    for n in range(200):
        record(log, n)
    log.close()
    files = sorted(p.name for p in folder.glob("audit.jsonl*"))
    assert files == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    for name in files:
        text = (folder / name).read_text()
        assert len(text) <= 2048
        assert all(json.loads(line)["operation"] == "call-tool" for line in text.splitlines())  # lines stay whole


def test_the_defaults_bound_every_log(tmp_path: Path) -> None:
    settings = parse_config("", tmp_path / "agent-host.toml").host
    assert (settings.audit_log_max, settings.audit_log_keep) == (64 * 1024 * 1024, 5)
    assert (settings.server_log_max, settings.server_log_keep) == (8 * 1024 * 1024, 1)
    assert settings.guest_output_max == 16 * 1024 * 1024


def test_a_rotating_file_with_keep_0_is_emptied_when_full(tmp_path: Path) -> None:
    from agent_host._support.rotation import LogBounds, RotatingFile

    log = RotatingFile(tmp_path / "x.log", LogBounds(100, 0))
    for _ in range(10):
        log.write(b"y" * 40)
    log.close()
    assert [p.name for p in tmp_path.iterdir()] == ["x.log"]
    assert (tmp_path / "x.log").stat().st_size <= 100


def test_a_rotating_file_follows_a_rotation_made_by_someone_else(tmp_path: Path) -> None:
    from agent_host._support.rotation import LogBounds, RotatingFile

    path = tmp_path / "x.log"
    log = RotatingFile(path, LogBounds(1000, 1))
    log.write(b"first\n")
    path.rename(tmp_path / "elsewhere.log")
    log.write(b"second\n")
    log.close()
    assert path.read_bytes() == b"second\n"


def test_the_token_folder_is_tightened_to_0700(tmp_path: Path) -> None:
    folder = tmp_path / "tokens"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    TokenFile("t", "https://example.invalid/mcp", folder).save(Record("https://example.invalid/mcp"))
    assert mode(folder) == 0o700
    assert mode(folder / "t.json") == 0o600


def test_a_symlink_planted_at_the_token_temp_file_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "tokens"
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    planted = folder / f".t.json.{os.getpid()}.tmp"
    planted.symlink_to(victim)
    tokens = TokenFile("t", "https://example.invalid/mcp", folder)
    tokens.save(Record("https://example.invalid/mcp", tokens={"access_token": "tok"}))
    assert victim.read_text() == "untouched"
    assert not planted.exists() and not planted.is_symlink()
    assert tokens.load().tokens == {"access_token": "tok"}
    assert not (folder / "t.json").is_symlink() and mode(folder / "t.json") == 0o600
