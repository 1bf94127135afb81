"""The token files of HTTP toolings: mode 0600 from the first byte, bound to the tooling's URL.

Tokens are stored per tooling in the user's config folder (0700), read back for their URL only, and
never shown in a record's repr or summary.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agent_host.toolings.mcp.tokens import ENV_TOKENS, Record, TokenFile, tokens_dir


def test_a_saved_record_is_private_and_read_back_for_its_url_only(tmp_path: Path) -> None:
    file = TokenFile("t", "https://a/mcp", tmp_path / "tokens")
    file.save(Record("https://a/mcp", {"access_token": "AT-1", "refresh_token": "RT-1"}, 123.0, {"client_id": "c"}))
    assert stat.S_IMODE(file.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.path.parent.stat().st_mode) == 0o700
    loaded = file.load()
    assert loaded.tokens == {"access_token": "AT-1", "refresh_token": "RT-1"} and loaded.expires_at == 123.0
    assert TokenFile("t", "https://other/mcp", tmp_path / "tokens").load().tokens is None
    assert "AT-1" not in repr(loaded) and "AT-1" not in str(loaded.summary())
    assert loaded.summary()["refreshable"] is True and loaded.summary()["expired"] is True


def test_a_file_changed_by_another_process_is_noticed_and_remove_forgets_it(tmp_path: Path) -> None:
    mine = TokenFile("t", "https://a/mcp", tmp_path)
    mine.save(Record("https://a/mcp", {"access_token": "x"}))
    assert not mine.changed()
    assert TokenFile("t", "https://a/mcp", tmp_path).remove()
    assert mine.changed()
    assert mine.load().tokens is None and not mine.remove()


def test_the_folder_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_TOKENS, str(tmp_path / "here"))
    assert tokens_dir() == tmp_path / "here"
    monkeypatch.delenv(ENV_TOKENS)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert tokens_dir() == tmp_path / "cfg" / "agent-host" / "tokens"
