"""OAuth for HTTP toolings: client credentials, `auth login|status|logout`, refresh, `unauthorized`.

Through the SDK's OAuthClientProvider, tokens are stored per tooling with 0600 permissions and
refreshed automatically; `agent-host auth login TOOLING` works headless with a pasted redirect;
guests get `unauthorized` naming the command to run; tokens never reach a guest, a log line or the
audit log. The server is tests/servers/guarded.py
(the SDK's `MCPServer` with its auth settings and an in-process authorization server) over HTTP on
127.0.0.1, on both protocol eras. The login runs the CLI as a child process: the test follows the
printed URL to the authorization endpoint (which approves at once) and pastes the redirect on stdin.
Calls go through a session, as a guest's do. User folders point into tmp_path.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import httpx2
import pytest

from agent_host import Host
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import FINAL_KINDS
from tests.support import cli_process
from tests.support.component import REPO, Server

pytestmark = pytest.mark.component

LIFETIME: Final = 3600
"""Seconds the test server's access tokens live: long, so that none expires by itself during a test
however loaded the machine (a test that needs an expired token makes one: `expire`)."""
CLI_TIMEOUT: Final = 60.0
"""Seconds a CLI child process may take."""

ERAS: Final = {"2026": "", "2025": 'protocol = "2025-11-25"\n'}


@pytest.fixture(params=sorted(ERAS))
def era(request: pytest.FixtureRequest) -> str:
    return ERAS[request.param]


@pytest.fixture
def guarded() -> Iterator[Server]:
    cmd = [sys.executable, "-m", "tests.servers.guarded", "--http", "0", "--lifetime", str(LIFETIME)]
    server = Server([*cmd, "--client", "bot:s3cret-value", "--app", "app:app-s3cret"])
    yield server
    server.stop()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The variables of the host (set here) and of the CLI (laid over its clean environment): tokens
    and config folders in tmp_path."""
    extra = {"AGENT_HOST_TOKENS": str(tmp_path / "tokens"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
             "CC_SECRET": "s3cret-value"}  # fmt: skip
    for key, value in extra.items():
        monkeypatch.setenv(key, value)
    return {**extra, "PYTHONPATH": str(REPO)}


def config_text(url: str, era: str, tmp_path: Path) -> str:
    audit = tmp_path / "audit.jsonl"
    return (
        f'[host]\naudit_log = "{audit}"\naudit_arguments = true\n'
        f'[tooling.t]\nurl = "{url}"\n{era}auth = {{ type = "oauth", scopes = ["read"] }}\n'
        f'[tooling.m2m]\nurl = "{url}"\n{era}'
        'auth = { type = "client_credentials", client_id = "bot", client_secret = "${CC_SECRET}" }\n'
    )


def write_config(url: str, era: str, tmp_path: Path) -> Path:
    path = tmp_path / "agent-host.toml"
    path.write_text(config_text(url, era, tmp_path), encoding="utf-8")
    return path


def cli(config: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return cli_process.run("auth", *args, "--config", str(config), env=env, timeout=CLI_TIMEOUT)


def login(config: Path, env: dict[str, str], tooling: str = "t") -> str:
    """`agent-host auth login TOOLING`, approved by following its URL; its stderr."""
    child = cli_process.start("auth", "login", tooling, "--config", str(config), env=env, stdin=subprocess.PIPE)
    assert child.stderr is not None and child.stdin is not None
    seen: list[str] = []
    url = None
    while url is None:
        line = child.stderr.readline()
        assert line, f"the login ended without printing a URL: {''.join(seen)}"
        seen.append(line)
        if line.startswith("  http"):
            url = line.strip()
    redirect = httpx2.get(url, follow_redirects=False)
    assert redirect.status_code in (302, 303, 307), redirect.text
    out, err = child.communicate(redirect.headers["location"] + "\n", timeout=CLI_TIMEOUT)
    assert child.returncode == 0, "".join(seen) + err
    return "".join(seen) + err + out


def stored(tmp_path: Path, tooling: str = "t") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "tokens" / f"{tooling}.json").read_text(encoding="utf-8"))
    return data


def expire(tmp_path: Path, tooling: str = "t") -> None:
    """Make the stored access token of `tooling` expired, as the passing of its lifetime would:
    its `expires_at` in the past, the file replaced whole (mode 0600) as another process writes it."""
    record = stored(tmp_path, tooling)
    record["expires_at"] = time.time() - 60
    path = tmp_path / "tokens" / f"{tooling}.json"
    temp = path.with_name(f".{path.name}.test.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(record, out)
    os.replace(temp, path)


def secrets_of(record: dict[str, Any]) -> set[str]:
    tokens = record.get("tokens") or {}
    return {value for key in ("access_token", "refresh_token") if (value := tokens.get(key))}


def assert_mode_0600(path: Path) -> None:
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def call(session: Any, tooling: str, tool: str, arguments: dict[str, Any] | None = None) -> str:
    outcome = session.call_tool_blocking(session.get(tooling), tool, json.dumps(arguments or {}))
    return str(outcome.value)


def activity(session: Any, tooling: str = "t") -> dict[str, Any]:
    found: dict[str, Any] = json.loads(call(session, tooling, "activity"))["structuredContent"]
    return found


def test_client_credentials_get_a_token_with_no_person(
    guarded: Server, era: str, tmp_path: Path, env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with Host(parse_config(config_text(guarded.url, era, tmp_path), tmp_path / "agent-host.toml")) as host:
        session = host.session("agent", allow=["*"])
        first = activity(session, "m2m")
        echoed = call(session, "m2m", "echo", {"text": "hello"})
        session.close()
    assert first["client_id"] == "bot" and first["client_credentials"] == 1
    assert "hello" in echoed
    assert_mode_0600(tmp_path / "tokens" / "m2m.json")
    tokens = secrets_of(stored(tmp_path, "m2m"))
    assert tokens, "the client-credentials token is stored"
    seen = caplog.text + (tmp_path / "audit.jsonl").read_text(encoding="utf-8") + json.dumps(first) + echoed
    assert "s3cret-value" not in seen
    assert not any(token in seen for token in tokens)


def test_login_then_calls_succeed_and_an_expired_token_is_refreshed(
    guarded: Server, era: str, tmp_path: Path, env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    config = write_config(guarded.url, era, tmp_path)
    printed = login(config, env)
    token_file = tmp_path / "tokens" / "t.json"
    assert_mode_0600(token_file)
    first = stored(tmp_path)
    status = cli(config, env, "status", "t", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["t"]["logged_in"] is True
    seen_tokens = secrets_of(first)
    guest_visible: list[str] = []
    with Host(parse_config(config.read_text(encoding="utf-8"), config)) as host:
        session = host.session("agent", allow=["*"])
        before = activity(session)
        guest_visible.append(json.dumps(before))
        expire(tmp_path)  # deterministic: the token is expired now, whatever time the calls took
        after = activity(session)  # refreshed first, without a person
        guest_visible.append(json.dumps(after))
        session.close()
    second = stored(tmp_path)
    seen_tokens |= secrets_of(second)
    assert before["issued"] == 1 and before["refreshed"] == 0
    assert after["refreshed"] == 1 and after["issued"] == 1
    assert second["tokens"]["access_token"] != first["tokens"]["access_token"]
    assert_mode_0600(token_file)
    seen = printed + status.stdout + status.stderr + caplog.text + "".join(guest_visible)
    seen += (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert not any(token in seen for token in seen_tokens)


def test_after_logout_a_call_is_unauthorized_naming_the_login_command(
    guarded: Server, era: str, tmp_path: Path, env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    config = write_config(guarded.url, era, tmp_path)
    printed = login(config, env)
    seen_tokens = secrets_of(stored(tmp_path))
    with Host(parse_config(config.read_text(encoding="utf-8"), config)) as host:
        session = host.session("agent", allow=["*"])
        assert activity(session)["issued"] == 1
        out = cli(config, env, "logout", "t")  # while the host runs: it notices
        assert out.returncode == 0 and "logged out" in out.stderr
        with pytest.raises(ToolingError) as blocking:
            call(session, "t", "echo", {"text": "x"})
        call_id = session.call_tool(session.get("t"), "echo", json.dumps({"text": "x"}))
        envelope = session.recv(30_000)
        while envelope is not None and (envelope.id != call_id or envelope.kind not in FINAL_KINDS):
            envelope = session.recv(30_000)
        session.close()
    with Host(parse_config(config.read_text(encoding="utf-8"), config)) as host:  # a new host, no tokens
        session = host.session("agent", allow=["*"])
        with pytest.raises(ToolingError) as fresh:
            call(session, "t", "echo", {"text": "x"})
        session.close()
    for error in (blocking.value, fresh.value):
        assert error.code is ErrorCode.UNAUTHORIZED
        assert "run `agent-host auth login t`" in error.message
    assert envelope is not None and envelope.kind == "error"
    assert isinstance(envelope.payload, ToolingError) and envelope.payload.code is ErrorCode.UNAUTHORIZED
    status = cli(config, env, "status", "--json")
    assert json.loads(status.stdout)["t"]["logged_in"] is False
    seen = printed + out.stdout + out.stderr + caplog.text + blocking.value.message + envelope.payload.message
    seen += (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert not any(token in seen for token in seen_tokens)


def test_a_wider_scope_is_obtained_without_a_person_only_when_client_credentials_allow_it(
    guarded: Server, era: str, tmp_path: Path, env: dict[str, str]
) -> None:
    """A 403 asking for a wider scope (step-up): client credentials get a new token with it; a
    login's refresh token cannot widen its grant, so that call is `unauthorized` naming the login."""
    config = write_config(guarded.url, era, tmp_path)
    login(config, env)
    with Host(parse_config(config.read_text(encoding="utf-8"), config)) as host:
        session = host.session("agent", allow=["*"])
        before = activity(session, "m2m")["client_credentials"]
        stepped = call(session, "m2m", "admin")
        after = activity(session, "m2m")["client_credentials"]
        with pytest.raises(ToolingError) as refused:
            call(session, "t", "admin")
        assert "hello" in call(session, "t", "echo", {"text": "hello"})  # the login still works for `read`
        session.close()
    assert "admin ok" in stepped and after == before + 1
    assert refused.value.code is ErrorCode.UNAUTHORIZED
    assert "run `agent-host auth login t`" in refused.value.message


def test_a_pre_registered_client_logs_in_with_its_own_id_and_secret(
    guarded: Server, era: str, tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`auth = { type = "oauth", client_id, client_secret }`: no dynamic registration; the secret
    (`${VAR}`) never shows."""
    monkeypatch.setenv("APP_SECRET", "app-s3cret")
    env = {**env, "APP_SECRET": "app-s3cret"}
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f'[tooling.app]\nurl = "{guarded.url}"\n{era}'
        'auth = { type = "oauth", client_id = "app", client_secret = "${APP_SECRET}", scopes = ["read"] }\n',
        encoding="utf-8",
    )
    printed = login(config, env, "app")
    with Host(parse_config(config.read_text(encoding="utf-8"), config)) as host:
        session = host.session("agent", allow=["*"])
        seen = activity(session, "app")
        session.close()
    assert seen["client_id"] == "app"  # the configured client, not a dynamically registered one
    assert "app-s3cret" not in printed + json.dumps(seen) + (tmp_path / "tokens" / "app.json").read_text()


def test_auth_commands_name_what_is_wrong(guarded: Server, tmp_path: Path, env: dict[str, str]) -> None:
    config = write_config(guarded.url, "", tmp_path)
    unknown = cli(config, env, "login", "nope")
    assert unknown.returncode == 2
    assert "tooling 'nope' is not defined" in unknown.stderr and "toolings with auth: m2m, t" in unknown.stderr
    child = cli_process.run(
        "auth", "login", "t", "--config", str(config),
        input="http://127.0.0.1:33418/callback?error=access_denied\n", env=env, timeout=CLI_TIMEOUT,
    )  # fmt: skip
    assert child.returncode == 2
    assert "the authorization server refused the login: access_denied" in child.stderr
