"""`agent-host serve --http` against clients that hold sockets: idle, slow headers, slow bodies, too
many connections (in all, from one client), the open-file limit, clients that never read their
answers, oversize headers in one piece, the throttled lines of bad requests; and the Host check of
a bind beyond loopback.

No client, token or not, holds sockets for ever or starves the others: timeouts cut idle and slow
connections and slow readers, connections are bounded in all and per client, idle sockets cannot
reach the open-file limit, and the log lines of bad requests and cancelled calls are throttled. A
bind beyond loopback answers any Host with a token, and a request framed two ways is a 400. The real
command, raw sockets on 127.0.0.1 (other 127/8 addresses stand for other clients, and 127.0.0.2 for
an address beyond loopback: the config treats it so, the traffic stays on this machine). Every wait
is bounded by `WAIT` (a socket timeout, or a line the server logs); the timeouts under test are
short so that the bounds are far.
"""

from __future__ import annotations

import queue
import resource
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx2
import pytest

from agent_host.serve.connections import FD_RESERVE
from tests.support.component import PROBE, REPO
from tests.support.processes import leaked
from tests.support.serving import HttpServe

pytestmark = [
    pytest.mark.component,
    pytest.mark.real_processes,
]  # their subject: the server process's descriptors and connections

IDLE = REPO / "tests" / "guests" / "probe"  # its idle part: input = milliseconds to wait
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


def connect(served: HttpServe, source: str | None = None, receive_buffer: int | None = None) -> socket.socket:
    """A connection to `served` from `source` (a 127/8 address: another client), with a small receive
    buffer when `receive_buffer` is given (set before connecting, so the window is small)."""
    host, port = served.base.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(WAIT)
    if receive_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    if source is not None:
        sock.bind((source, 0))
    sock.connect(("127.0.0.1" if host == "0.0.0.0" else host, int(port)))
    return sock


class Watched:
    """The stderr lines of a served process as they come (so a test can wait for one), collected
    into `served.stderr` at `stop`."""

    def __init__(self, served: HttpServe) -> None:
        self._served = served
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self._served.process.stderr
        assert stream is not None
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, text: str) -> str:
        """The first line (from now on) holding `text`; fails after `WAIT` seconds without one."""
        while True:
            line = self._lines.get(timeout=WAIT)
            assert line is not None, f"the server ended without logging {text!r}: {self.seen}"
            self.seen.append(line)
            if text in line:
                return line

    def seen_within(self, text: str, seconds: float) -> bool:
        """Whether a line (from now on) holds `text` within `seconds` (a bounded wait, also the pace of
        a client that reads slowly)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                return False
            assert line is not None, f"the server ended without logging {text!r}: {self.seen}"
            self.seen.append(line)
            if text in line:
                return True
        return False

    def stop(self) -> str:
        self._served.process.terminate()
        self._served.process.wait(timeout=60)
        self._reader.join(timeout=WAIT)
        for stream in (self._served.process.stdout, self._served.process.stderr):
            if stream is not None:
                stream.close()
        while (line := self._lines.get_nowait()) is not None:
            self.seen.append(line)
        self._served.stderr = "".join(self.seen)
        return self._served.stderr


@contextmanager
def watched(path: Path, *extra: str, agent: str = "idle") -> Iterator[tuple[HttpServe, Watched]]:
    served = HttpServe(path, "--agent", agent, *extra)
    watch = Watched(served)
    try:
        yield served, watch
    finally:
        watch.stop()
    assert not leaked()


def ended_by_the_server(sock: socket.socket) -> bool:
    """Whether the server ended the connection (reset, or closed once what it wrote is read)."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        return True
    return True


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
    """One client (every 127/8 address is client `loopback`) can reach the cap in all only when it
    is 1; beyond it every connection is refused at once (the refusal is checked before the one per
    client)."""
    path = config(tmp_path, f"max_connections = 1\nidle_timeout = {LONG}\n")
    with serving(path) as served, ExitStack() as held:
        kept = held.enter_context(connect(served, "127.0.0.2"))
        kept.sendall(HEALTHZ)  # answered, so admitted, then idle
        assert kept.recv(65536).startswith(b"HTTP/1.1 200 ")
        refusals = []
        for n in range(20):
            with connect(served, f"127.0.0.{3 + n}") as extra:
                refusals.append(read_all(extra))  # before the fix: served, so the read timed out
        assert all(answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n") for answer in refusals), refusals[0]
        assert b'"code": "limit-exceeded"' in refusals[0] and b"[serve] max_connections (1)" in refusals[0]
        kept.close()
        assert served_again(served)  # a place freed is taken again
    lines = [line for line in served.stderr.splitlines() if "refused a connection" in line]
    once = "agent-host: warning: refused a connection: [serve] max_connections (1) open; reported once per 30 s"
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
    """With the open-file limit 1 above `FD_RESERVE`, the cap is lowered to fit, and 200 idle
    sockets more than the limit leaves the server answering (before the fix it stopped accepting at
    the limit)."""
    limit = FD_RESERVE + 1

    def low_open_file_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    path = config(tmp_path, f"idle_timeout = {LONG}\n")
    with serving(path, preexec=low_open_file_limit) as served, ExitStack() as held:
        for n in range(FD_RESERVE + 200 - 1):  # from many addresses, which are one client: the cap is 1
            held.enter_context(connect(served, f"127.1.{n // 250}.{n % 250 + 1}"))
        with connect(served) as one_more:
            assert read_all(one_more).startswith(b"HTTP/1.1 503 "), "the server must still answer, cheaply"
        held.close()
        assert served_again(served)
    lowered = f"agent-host: warning: [serve] max_connections = 512 is lowered to 1: the open-file limit is {limit} "
    assert any(line.startswith(lowered) for line in served.preamble), served.preamble


TOKEN = {"SERVE_TOKEN": "tok-9"}
AUTH = {"authorization": "Bearer tok-9"}


def test_a_request_with_two_authorization_headers_is_refused_whichever_holds_the_token(tmp_path: Path) -> None:
    """Attack of 2026-12: with two `Authorization` headers the token check read the last one while
    Starlette reports the first: a request is refused (400) unless it has exactly one."""
    path = config(tmp_path, 'tokens = ["${SERVE_TOKEN}"]\n')
    with serving(path, env=TOKEN) as served:
        answers = []
        for first, second in (("Bearer nope", "Bearer tok-9"), ("Bearer tok-9", "Bearer nope"), ("Bearer tok-9",) * 2):
            with connect(served) as sock:
                sock.sendall(
                    b"GET /tools/list HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + f"Authorization: {first}\r\nAuthorization: {second}\r\n\r\n".encode()
                )
                answers.append(read_all(sock))
        one = httpx2.get(f"{served.base}/tools/list", headers=AUTH)
    assert all(answer.startswith(b"HTTP/1.1 400 ") for answer in answers), answers
    assert b'"code":"denied"' in answers[0] and b"more than one Authorization header" in answers[0]
    assert one.status_code == 200


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


PIPELINED = b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 2000
"""~100 KB of requests whose answers (~3 MB) cannot fit in a small receive window."""


def test_a_client_that_never_reads_its_answers_is_aborted_at_send_timeout_and_others_are_answered(
    tmp_path: Path,
) -> None:
    """Before the fix no timer ran while the server wrote: the connection was held for ever (and 512
    of them locked every other client out)."""
    path = config(
        tmp_path,
        f"max_connections = 3\nmax_connections_per_client = 2\nidle_timeout = {LONG}\nsend_timeout = {SHORT}\n",
    )
    with watched(path) as (served, watch), connect(served, "127.0.0.2", receive_buffer=4096) as stalled:
        stalled.setblocking(False)
        sent = 0
        try:
            while sent < len(PIPELINED):
                sent += stalled.send(PIPELINED[sent:])
        except BlockingIOError:
            pass  # the server stopped reading: it is answering (and its answers are not read)
        with connect(served) as other:  # another client is answered meanwhile
            other.sendall(HEALTHZ_THEN_CLOSE)
            assert read_all(other).startswith(b"HTTP/1.1 200 ")
        line = watch.wait_for("aborted a connection")
        stalled.setblocking(True)
        assert ended_by_the_server(stalled)
        assert served_again(served)  # its place is free
    assert "whose client did not read its answer: [serve] send_timeout (0.5 s); reported once per 30 s" in line


def test_one_client_holds_at_most_max_connections_per_client_whatever_127_8_addresses_it_sends_from(
    tmp_path: Path,
) -> None:
    """Before the fix one client's reopened idle sockets took every place of max_connections; then
    (attack of 2026-12, connflood.py) each 127/8 address counted as a client of its own, so one
    process sending from ten addresses held 512 connections. Every loopback address is the one
    client `loopback`, as for sessions (`clients.client_of_address`)."""
    path = config(tmp_path, f"max_connections = 8\nmax_connections_per_client = 2\nidle_timeout = {LONG}\n")
    with serving(path) as served, ExitStack() as held:
        for source in ("127.0.0.2", "127.0.0.3"):
            sock = held.enter_context(connect(served, source))
            sock.sendall(HEALTHZ)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        refused = [read_all(held.enter_context(connect(served, f"127.0.0.{4 + n}"))) for n in range(10)]
        assert all(answer.startswith(b"HTTP/1.1 429 Too Many Requests\r\n") for answer in refused), refused[0]
        assert b'"code": "limit-exceeded"' in refused[0] and b"max_connections_per_client (2)" in refused[0]
        held.close()
        assert served_again(served)  # its places are free again
    lines = [line for line in served.stderr.splitlines() if "max_connections_per_client" in line]
    assert lines == [
        "agent-host: warning: refused a connection: client loopback holds [serve] "
        "max_connections_per_client (2); reported once per 30 s"
    ]


def test_headers_over_16_kib_in_one_piece_are_refused_as_in_pieces(tmp_path: Path) -> None:
    """Before the fix h11's limit held only while headers were incomplete: one piece passed."""
    path = config(tmp_path, f"idle_timeout = {LONG}\n")
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nx-pad: " + b"a" * 20000 + b"\r\n\r\n"
    with serving(path) as served:
        with connect(served) as whole:
            whole.sendall(request)
            assert read_all(whole).startswith(b"HTTP/1.1 400 "), "a 20 KB head in one piece"
        with connect(served) as small:
            small.sendall(HEALTHZ_THEN_CLOSE)
            assert read_all(small).startswith(b"HTTP/1.1 200 ")


def test_bad_requests_and_upgrades_are_logged_once_per_interval(tmp_path: Path) -> None:
    """Before the fix uvicorn logged each one (`Invalid HTTP request received.`, `Unsupported upgrade
    request.` and its websocket notice), so a client could fill the log at will."""
    path = config(tmp_path, f"idle_timeout = {LONG}\n")
    upgrade = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: upgrade, close\r\nUpgrade: h2c\r\n\r\n"
    with serving(path) as served:
        for _ in range(10):
            with connect(served) as bad:
                bad.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                assert read_all(bad).startswith(b"HTTP/1.1 400 ")
            with connect(served) as upgrading:
                upgrading.sendall(upgrade)
                assert read_all(upgrading).startswith(b"HTTP/1.1 200 ")
    lines = served.stderr.splitlines()
    assert len([line for line in lines if "Invalid HTTP request received." in line]) == 1, lines
    assert len([line for line in lines if "Unsupported upgrade request." in line]) == 1, lines
    assert len([line for line in lines if "WebSocket" in line]) == 1, lines
    assert all("reported once per 30 s" in line for line in lines if "uvicorn" in line), lines


CALL = b"POST /tools/idle HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"


def call(sock: socket.socket, body: bytes) -> None:
    sock.sendall(CALL + b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)


def answered(served: HttpServe, body: bytes) -> bytes:
    with connect(served) as sock:
        call(sock, body)
        return read_all(sock)


def eventually(check: Callable[[], bool], within: float = 60.0) -> bool:
    """Whether `check()` (one request each) comes true within `within` seconds (a bound on the wait,
    not a timing assertion: under load a guest's stop can outlast any fixed number of tries)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return True
    return False


def test_calls_cancelled_by_their_clients_are_logged_once_per_interval(tmp_path: Path) -> None:
    """Before the fix `agent idle: call cancelled, its guest stopped` was one line per hang-up."""
    path = config(tmp_path, f"idle_timeout = {LONG}\nmax_concurrent = 1\nqueue = 0\n")
    quick = b'{"input": ""}'
    with serving(path) as served:
        for _ in range(3):
            with connect(served) as hanging:  # a call that waits; its client then hangs up
                call(hanging, b'{"input": "600000"}')
                assert eventually(lambda: b" 429 " in answered(served, quick).split(b"\r\n", 1)[0])  # it runs
            assert eventually(lambda: answered(served, quick).startswith(b"HTTP/1.1 200 "))  # stopped, turn freed
    cancelled = [line for line in served.stderr.splitlines() if "call cancelled, its guest stopped" in line]
    assert len(cancelled) == 1 and cancelled[0].endswith("; reported once per 30 s"), cancelled


SMUGGLING = {
    "transfer-encoding and content-length": (
        CALL + b'content-length: 3\r\ntransfer-encoding: chunked\r\n\r\nd\r\n{"input": ""}\r\n0\r\n\r\n' + HEALTHZ,
        b"both Transfer-Encoding and Content-Length",
    ),
    "a bare LF": (b"GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n" + HEALTHZ, b"ends with LF alone"),
    "an obs-fold": (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nx-a: a\r\n b\r\n\r\n" + HEALTHZ,
        b"a header line continues the one before",
    ),
}


@pytest.mark.parametrize("kind", list(SMUGGLING))
def test_a_request_framed_two_ways_is_refused_with_400_and_its_connection_closed(tmp_path: Path, kind: str) -> None:
    """Attack of 2026-12 (tecl.py): a request with both Transfer-Encoding and Content-Length was
    answered and its connection kept (RFC 9112 section 6.1: it must be closed; behind a proxy that
    frames by Content-Length, the rest is another request: smuggling). Line endings of LF alone and
    obs-fold continuations, which a proxy may read otherwise, are refused likewise."""
    request, reason = SMUGGLING[kind]
    path = config(tmp_path, f"idle_timeout = {LONG}\n")
    with serving(path) as served:
        with connect(served) as sock:
            sock.sendall(request)
            answer = read_all(sock)  # before the fix: answered (twice) and kept open, so the read timed out
        assert served_again(served)
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # nothing after it was read as a request
    assert b'"code": "protocol"' in answer and reason in answer, answer


def probe_config(tmp_path: Path, answer_bytes: int, serve: str) -> Path:
    """The probe agent, whose answer (its environment) is about `answer_bytes` long."""
    path = tmp_path / "agent-host.toml"
    path.write_text(
        f'[agents.probe]\ncomponent = "{PROBE}"\nenv = {{ BIG = "{"x" * answer_bytes}" }}\n[serve]\n{serve}'
    )
    return path


ENV_CALL = b'{"input": "{\\"steps\\": [{\\"op\\": \\"env\\"}]}"}'
"""The probe's input: answer with its environment."""

READ_PACE = 0.05
"""Seconds between two reads of the slow reader (each a bounded wait for the server's line)."""
SLOW_READ = 256
"""Bytes the slow reader reads at a time: at most 5 KiB/s, under the default min_send_rate (8 KiB/s)."""


def probe_call(sock: socket.socket, body: bytes, *, close: bool = False) -> None:
    sock.sendall(
        b"POST /tools/probe HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        + (b"connection: close\r\n" if close else b"")
        + b"content-length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


def test_a_client_that_reads_its_answer_slower_than_min_send_rate_is_aborted(tmp_path: Path) -> None:
    """Attack of 2026-12 (slowread.py): a client reading a byte now and then always beat
    `send_timeout`, so 24 of them held 15 MB answers each (RSS 124 -> 502 MB) for as long as they
    liked. While over `SLOW_PENDING` waits, less than `min_send_rate` delivered over a
    `send_timeout` window aborts the connection."""
    path = probe_config(tmp_path, 1 << 20, f"idle_timeout = {LONG}\nsend_timeout = 2\n")
    with watched(path, agent="probe") as (served, watch), connect(served, receive_buffer=4096) as slow:
        probe_call(slow, ENV_CALL)
        read = 0
        aborted = False
        for _ in range(int(WAIT / READ_PACE)):  # at most ~100 KB of the 1 MiB answer: it never ends by itself
            try:
                chunk = slow.recv(SLOW_READ)
            except ConnectionResetError:
                chunk = b""
            read += len(chunk)
            if not chunk or watch.seen_within("aborted a connection whose client read its answer", READ_PACE):
                aborted = True
                break
        assert aborted, f"read {read} bytes; the server kept the connection: {watch.seen}"
        assert ended_by_the_server(slow)
        assert served_again(served)
    lines = [line for line in served.stderr.splitlines() if "read its answer" in line]
    assert lines == [
        "agent-host: warning: aborted a connection whose client read its answer slower than [serve] min_send_rate "
        "(8192 bytes/s over send_timeout, 2 s); reported once per 30 s"
    ], served.stderr


def test_answers_waiting_for_slow_clients_are_bounded_in_all_by_max_pending_answers(tmp_path: Path) -> None:
    """Attack of 2026-12 (slowread.py): each slow reader held up to `max_result_bytes` of answer in
    the server's memory, 512 of them ~8 GiB. A whole answer that would take the answers waiting in
    every connection's buffer over `max_pending_answers` is refused (503 `limit-exceeded`) before
    any of it is sent; once the slow reader is gone, answers are served again."""
    serve = f'idle_timeout = {LONG}\nsend_timeout = {LONG}\nmax_pending_answers = "3MiB"\n'
    path = probe_config(tmp_path, 2 << 20, serve)
    with watched(path, agent="probe") as (served, watch):
        with connect(served, receive_buffer=4096) as slow:
            probe_call(slow, ENV_CALL)
            assert slow.recv(64).startswith(b"HTTP/1.1 200 ")  # its answer is written: it waits in the buffer
            with connect(served) as other:
                probe_call(other, ENV_CALL, close=True)
                refused = read_all(other)
        assert refused.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), refused[:300]
        watch.wait_for("refused an answer")
        assert eventually(lambda: answered_by_probe(served).startswith(b"HTTP/1.1 200 "))
    assert b'"code": "limit-exceeded"' in refused and b"[serve] max_pending_answers (3 MiB)" in refused


def answered_by_probe(served: HttpServe) -> bytes:
    with connect(served) as sock:
        probe_call(sock, ENV_CALL, close=True)
        return read_all(sock)
