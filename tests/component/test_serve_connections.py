"""`agent-host serve --http` against clients that hold sockets: idle, slow headers, slow bodies, too
many connections, the open-file limit; and the Host check of a bind beyond loopback.

Provenance: issue 20, point 4 (without a token anyone who could connect held sockets for ever; at
the fd limit the server stopped answering and logged `socket.accept() out of system resource`
hundreds of thousands of times) and point 9 (with a bind beyond loopback the Host check allowed
only the bind address, so a client naming the machine got 421). The real command, raw sockets on
127.0.0.1 (127.0.0.2 stands for an address beyond loopback: the config treats it so, the traffic
stays on this machine). Every wait is bounded by `WAIT` (a socket timeout); the timeouts under
test are short so that the bounds are far.
"""

from __future__ import annotations

import resource
import select
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx2
import pytest

from host.serve.connections import FD_RESERVE
from tests.component.conftest import REPO
from tests.component.serving import HttpServe
from tests.processes import leaked

pytestmark = pytest.mark.component

IDLE = REPO / "tests" / "guests" / "idle"
WAIT = 20.0
"""Seconds any read from the server may take before the test fails (the bounds tested are < 1 s)."""
SHORT = 0.5
"""The timeout under test, in seconds."""
LONG = 120
"""A timeout that must not be the one that ends the connection."""


def config(tmp_path: Path, serve: str) -> Path:
    path = tmp_path / "agent-host.toml"
    path.write_text(f'[agents.idle]\ncomponent = "{IDLE}"\n[serve]\n{serve}')
    return path


@contextmanager
def serving(path: Path, *extra: str, **options: object) -> Iterator[HttpServe]:
    served = HttpServe(path, "--agent", "idle", *extra, **options)  # type: ignore[arg-type]
    try:
        yield served
    finally:
        served.stop()
    assert not leaked()


def connect(served: HttpServe) -> socket.socket:
    host, port = served.base.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection(("127.0.0.1" if host == "0.0.0.0" else host, int(port)), timeout=WAIT)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server writes until it closes the connection (a socket timeout fails the test)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
HEALTHZ_THEN_CLOSE = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def test_a_connection_that_sends_nothing_is_closed_after_idle_timeout(tmp_path: Path) -> None:
    path = config(tmp_path, f"idle_timeout = {SHORT}\nheader_timeout = {LONG}\n")
    with serving(path) as served, connect(served) as sock:
        assert read_all(sock) == b""  # closed; before the fix the read timed out
        with connect(served) as kept:  # between requests, too
            kept.sendall(HEALTHZ_THEN_CLOSE)
            assert read_all(kept).startswith(b"HTTP/1.1 200 ")


def test_headers_trickling_in_are_cut_at_header_timeout_from_their_first_byte(tmp_path: Path) -> None:
    path = config(tmp_path, f"idle_timeout = {LONG}\nheader_timeout = {SHORT}\n")
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"x-pad: " + b"a" * 1000
    with serving(path) as served, connect(served) as sock:
        for byte in request:  # one byte every 20 ms at most: each one keeps the connection busy
            sock.sendall(bytes([byte]))
            readable, _, _ = select.select([sock], [], [], 0.02)
            if readable:
                break
        else:
            raise AssertionError("the server waited for the whole trickle")
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    assert b'"code": "timeout"' in answer and b"[serve] header_timeout (0.5 s)" in answer
    assert "closed a connection slow to send its headers: [serve] header_timeout (0.5 s)" in served.stderr


def test_a_body_that_does_not_arrive_is_cut_at_body_timeout(tmp_path: Path) -> None:
    path = config(tmp_path, f"idle_timeout = {LONG}\nheader_timeout = {LONG}\nbody_timeout = {SHORT}\n")
    head = (
        b"POST /tools/idle HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n"
    )
    with serving(path) as served, connect(served) as sock:
        sock.sendall(head + b'{"input"')  # and nothing more
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    assert b"[serve] body_timeout (0.5 s)" in answer


def test_connections_beyond_max_connections_get_a_503_at_once_logged_once(tmp_path: Path) -> None:
    path = config(tmp_path, f"max_connections = 3\nidle_timeout = {LONG}\n")
    with serving(path) as served, ExitStack() as held:
        kept = [held.enter_context(connect(served)) for _ in range(3)]
        for sock in kept:  # each one answered, so admitted, then idle
            sock.sendall(HEALTHZ)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        refusals = []
        for _ in range(20):
            with connect(served) as extra:
                refusals.append(read_all(extra))  # before the fix: served, so the read timed out
        assert all(answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n") for answer in refusals), refusals[0]
        assert b'"code": "limit-exceeded"' in refusals[0] and b"[serve] max_connections (3)" in refusals[0]
        kept.pop().close()
        assert served_again(served)  # a place freed is taken again
    lines = [line for line in served.stderr.splitlines() if "refused a connection" in line]
    once = "agent-host: warning: refused a connection: [serve] max_connections (3) open; reported once per 30 s"
    assert lines == [once]


def served_again(served: HttpServe, attempts: int = 100) -> bool:
    """Whether a new connection is answered 200 within `attempts` tries (the server sees a closed
    connection after the client closed it)."""
    for _ in range(attempts):
        with connect(served) as sock:
            sock.sendall(HEALTHZ_THEN_CLOSE)
            if read_all(sock).startswith(b"HTTP/1.1 200 "):
                return True
    return False


def test_idle_sockets_cannot_reach_the_open_file_limit(tmp_path: Path) -> None:
    """With the open-file limit 64 above `FD_RESERVE`, the cap is lowered to fit, and 200 idle
    sockets leave the server answering (before the fix it stopped accepting at the limit)."""
    limit = FD_RESERVE + 64

    def low_open_file_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    path = config(tmp_path, f"idle_timeout = {LONG}\n")
    with serving(path, preexec=low_open_file_limit) as served, ExitStack() as held:
        for _ in range(FD_RESERVE + 200 - 64):
            held.enter_context(connect(served))
        with connect(served) as one_more:
            assert read_all(one_more).startswith(b"HTTP/1.1 503 "), "the server must still answer, cheaply"
        held.close()
        assert served_again(served)
    lowered = f"agent-host: warning: [serve] max_connections = 512 is lowered to 64: the open-file limit is {limit} "
    assert any(line.startswith(lowered) for line in served.preamble), served.preamble


TOKEN = {"SERVE_TOKEN": "tok-9"}
AUTH = {"authorization": "Bearer tok-9"}


def test_a_bind_beyond_loopback_answers_any_host_with_a_token_and_same_origin_only(tmp_path: Path) -> None:
    path = config(tmp_path, 'tokens = ["${SERVE_TOKEN}"]\n')
    with serving(path, "--http", "127.0.0.2:0", env=TOKEN) as served:
        port = served.base.rsplit(":", 1)[1]
        named = httpx2.get(f"{served.base}/tools/list", headers={**AUTH, "host": f"build-box.lan:{port}"})
        same_origin = httpx2.get(
            f"{served.base}/tools/list",
            headers={**AUTH, "host": f"build-box.lan:{port}", "origin": f"http://build-box.lan:{port}"},
        )
        foreign_origin = httpx2.get(f"{served.base}/tools/list", headers={**AUTH, "origin": "http://evil.example"})
        no_token = httpx2.get(f"{served.base}/tools/list", headers={"host": f"build-box.lan:{port}"})
    assert named.status_code == 200, named.text  # 421 before the fix
    assert same_origin.status_code == 200, same_origin.text
    assert foreign_origin.status_code == 403 and foreign_origin.json()["error"]["code"] == "denied"
    assert no_token.status_code == 401


def test_allowed_hosts_are_answered_and_a_loopback_bind_stays_strict(tmp_path: Path) -> None:
    path = config(tmp_path, 'allowed_hosts = ["agents.example.com", "*.corp.example:*"]\n')
    with serving(path) as served:

        def status(host: str, origin: str | None = None) -> int:
            headers = {"host": host} | ({"origin": origin} if origin else {})
            return httpx2.get(f"{served.base}/tools/list", headers=headers).status_code

        statuses = [
            status("agents.example.com"),
            status("agents.example.com:8080", "https://agents.example.com"),
            status("box.corp.example:9"),
            status("localhost:1"),
            status("evil.example"),
            status("127.0.0.1", "http://evil.example"),
        ]
    assert statuses == [200, 200, 200, 200, 421, 403]
