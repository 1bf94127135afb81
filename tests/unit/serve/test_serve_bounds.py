"""The bounds of `agent-host serve --http` that need no server: the throttled log, the open-file fit,
the Host and Origin rules, and their `[serve]` keys.

`socket.accept()` running out of descriptors is logged once per interval, not per event; the connection
cap must fit RLIMIT_NOFILE; the allowed hosts are configurable and a loopback bind is kept strict.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
from pathlib import Path

import anyio
import pytest

from agent_host.config import parse_config
from agent_host.errors import ConfigError, UsageError
from agent_host.serve import connections
from agent_host.serve.connections import FD_RESERVE, Bounds, ConnectionGuard, fit_open_files
from agent_host.serve.hosts import HostRules
from agent_host.serve.limit_log import LimitLog
from agent_host.serve.turns import Ticket, Turns

FILE = Path("/etc/agent/agent-host.toml")
BOUNDS = Bounds(max_connections=2, idle_timeout=5, header_timeout=10, body_timeout=30)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_throttled_event_is_logged_once_per_interval_with_the_count_it_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    throttled = LimitLog(logging.getLogger("host.test"), interval=30, clock=clock)
    with caplog.at_level(logging.WARNING, "host.test"):
        for _ in range(1000):
            throttled.reached("max_connections", "refused")
        clock.now += 30
        throttled.reached("max_connections", "refused")
    assert [record.getMessage() for record in caplog.records] == [
        "refused; reported once per 30 s",
        "refused (and 999 more since the last report); reported once per 30 s",
    ]


def test_accept_out_of_descriptors_is_throttled_and_other_loop_errors_are_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    guard = ConnectionGuard(BOUNDS)
    loop = asyncio.new_event_loop()
    try:
        with socket.socket() as sock, caplog.at_level(logging.WARNING):
            for _ in range(500):  # what asyncio reports at each accept that finds no descriptor
                context = {"message": "socket.accept() out of system resource", "socket": sock}
                guard.accept_failed(loop, {**context, "exception": OSError(errno.EMFILE, "Too many open files")})
            guard.accept_failed(loop, {"message": "something else", "exception": RuntimeError("boom")})
    finally:
        loop.close()
    messages = [record.getMessage() for record in caplog.records]
    once = "cannot accept connections: Too many open files (retried every second); reported once per 30 s"
    assert messages[0] == once
    assert messages[1:] == ["something else"]  # the default handler's, once


def test_the_connection_cap_fits_the_open_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = {"soft": 1024, "hard": 1024}

    def getrlimit(which: int) -> tuple[int, int]:
        return limits["soft"], limits["hard"]

    def setrlimit(which: int, values: tuple[int, int]) -> None:
        if values[0] > limits["hard"]:
            raise ValueError("not allowed")
        limits["soft"] = values[0]

    monkeypatch.setattr(resource, "getrlimit", getrlimit)
    monkeypatch.setattr(resource, "setrlimit", setrlimit)
    assert fit_open_files(512) == 512
    assert fit_open_files(1000) == 1024 - FD_RESERVE  # lowered: the hard limit is 1024
    limits.update(soft=256, hard=4096)
    assert (fit_open_files(1000), limits["soft"]) == (1000, 1000 + FD_RESERVE)  # the soft limit raised
    limits.update(soft=FD_RESERVE, hard=FD_RESERVE)
    with pytest.raises(UsageError) as caught:
        fit_open_files(512)
    assert str(caught.value).startswith(f"the open-file limit ({FD_RESERVE}) is too low to serve HTTP")
    assert connections.FD_RESERVE > connections.ACCEPT_BATCH  # a batch refused at the cap fits in the reserve


def test_a_loopback_bind_answers_only_the_loopback_names_and_what_allowed_hosts_adds() -> None:
    strict = HostRules.of("127.0.0.1", None)
    assert [strict.host_allowed(h) for h in ("127.0.0.1:8080", "localhost", "[::1]:9", "LOCALHOST:1")] == [True] * 4
    assert [strict.host_allowed(h) for h in ("evil.example", "127.0.0.1.evil.example", "", None, "a b")] == [False] * 5
    named = HostRules.of("127.0.0.1", ["agents.example.com:8080", "*.corp.example"])
    assert named.host_allowed("agents.example.com:8080") and not named.host_allowed("agents.example.com:80")
    assert named.host_allowed("x.corp.example:1") and not named.host_allowed("corp.example")
    assert named.host_allowed("localhost:1")  # the machine's own names stay


def test_a_bind_beyond_loopback_answers_any_host_but_origins_only_of_the_same_origin_or_named() -> None:
    rules = HostRules.of("0.0.0.0", None)
    assert rules.host_allowed("build-box.lan:8080") and rules.host_allowed("10.1.2.3")
    assert rules.origin_allowed(None, "build-box.lan:8080")
    assert rules.origin_allowed("http://build-box.lan:8080", "build-box.lan:8080")
    assert rules.origin_allowed("http://localhost:3000", "build-box.lan:8080")
    assert not rules.origin_allowed("http://evil.example", "build-box.lan:8080")
    assert not rules.origin_allowed("null", "build-box.lan:8080")
    assert not rules.origin_allowed("ftp://build-box.lan:8080", "build-box.lan:8080")
    narrowed = HostRules.of("0.0.0.0", ["agents.example.com"])
    assert narrowed.host_allowed("agents.example.com:8080") and not narrowed.host_allowed("10.1.2.3")


def error_of(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, FILE, {"T": "tok"})
    return caught.value


def test_the_serve_bounds_have_defaults_and_are_checked() -> None:
    serve = parse_config("", FILE, {}).serve
    assert (serve.max_connections, serve.idle_timeout, serve.header_timeout, serve.body_timeout) == (512, 5, 10, 30)
    assert serve.allowed_hosts is None
    assert error_of("[serve]\nmax_connections = 0\n").message.startswith(f"{FILE}: serve.max_connections: ")
    assert error_of("[serve]\nheader_timeout = 0\n").message.startswith(f"{FILE}: serve.header_timeout: ")
    bad = error_of('[serve]\nallowed_hosts = ["http://x.example/"]\n')
    assert bad.message == (
        f"{FILE}: serve.allowed_hosts: expected NAME or NAME:PORT (an IPv6 address in brackets), got 'http://x.example/'"
    )
    anyone = error_of('[serve]\nallowed_hosts = ["*"]\n')
    assert anyone.message == (
        f'{FILE}: serve.allowed_hosts: accepting any Host ("*") without a token opens the server to DNS rebinding'
    )
    with_token = parse_config('[serve]\nallowed_hosts = ["*"]\ntokens = ["${T}"]\n', FILE, {"T": "tok"}).serve
    assert with_token.allowed_hosts == ("*",)


def test_the_per_client_connection_cap_must_be_below_max_connections() -> None:
    """One client's sockets must not take every connection."""
    serve = parse_config("", FILE, {}).serve
    assert (serve.max_connections_per_client, serve.send_timeout) == (64, 30)
    assert (serve.min_send_rate, serve.max_pending_answers) == (8 * 1024, 256 * 1024 * 1024)
    error = error_of("[serve]\nmax_connections = 32\n")
    assert error.message.startswith(
        f"{FILE}: serve.max_connections_per_client: max_connections_per_client (64) must be below max_connections (32)"
    )
    assert parse_config("[serve]\nmax_connections = 32\nmax_connections_per_client = 8\n", FILE, {}).serve


@pytest.mark.anyio
async def test_a_waiting_call_handed_a_turn_frees_its_queue_place_at_once() -> None:
    """A call ending hands its turn to the first waiter, which must stop counting as waiting at once,
    not when it next runs; else a call arriving meanwhile (at max_concurrent 4, queue 8) finds 4
    running and 8 waiting while only 7 wait, and gets an early 429."""
    turns = Turns(4, 8)
    ends = [anyio.Event() for _ in range(13)]
    late: list[Ticket | str] = []

    async def call(index: int, ticket: Ticket | str) -> None:
        assert isinstance(ticket, Ticket), ticket
        async with turns.turn(ticket):
            await ends[index].wait()
        if index == 0:
            late.append(turns.admit("c"))  # before the waiter handed its turn has run

    async with anyio.create_task_group() as tg:
        for index in range(12):
            tg.start_soon(call, index, turns.admit("c"))
            await anyio.wait_all_tasks_blocked()
        assert isinstance(turns.admit("c"), str)  # 4 run, 8 wait: full
        ends[0].set()
        await anyio.wait_all_tasks_blocked()
        assert len(late) == 1 and isinstance(late[0], Ticket), late
        tg.start_soon(call, 12, late[0])
        for end in ends:
            end.set()
