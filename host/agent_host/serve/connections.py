"""The connections of `agent-host serve --http`: caps, and a time limit on every wait for a client.

`guarded_protocol` is uvicorn's h11 protocol (through `uvicorn_hooks.EdgeProtocol`, the door to uvicorn's
internals) with one timer per connection, set by what it waits for from its client (`Phase`; none while
a request is answered), and a watch on what it writes (`SendWatch`: unsent data not read for `send_timeout`,
or read slower than `min_send_rate` while more than `SLOW_PENDING` waits, aborts it). Beyond `[serve]
max_connections` a connection gets a fixed 503 `limit-exceeded`, unread, and is closed; beyond
`max_connections_per_client` from one client (`client_of_peer`), a 429; `fit_open_files` fits the cap under
RLIMIT_NOFILE. Answers waiting for their clients are held to `max_pending_answers` (`AnswerBudget`). A head
over `MAX_HEADER_BYTES`, or framed two ways, is refused with 400 and a close (`BoundedHeads`). Refusals,
timeouts, `accept` failing for want of descriptors and uvicorn's warnings are logged once per interval.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import errno
import fcntl
import json
import logging
import re
import resource
import termios
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_host.config import format_size
from agent_host.errors import ErrorCode, UsageError
from agent_host.serve.clients import UNKNOWN, client_of_address
from agent_host.serve.limit_log import LimitLog
from agent_host.serve.uvicorn_hooks import EdgeProtocol, require

logger = logging.getLogger(__name__)

ACCEPT_BATCH: Final = 128
"""Connections the listening socket queues, which is also how many asyncio accepts in one go."""

FD_RESERVE: Final = 384
"""File descriptors kept beside `[serve] max_connections` for everything else: an accept batch
(`ACCEPT_BATCH`) of connections refused at the cap, the guests' files, servers' pipes, logs."""

MAX_HEADER_BYTES: Final = 16 * 1024
"""Largest request line and headers read before answering 400 (h11's own default), whether they
arrive in pieces or in one."""

WRITE_BUFFER_HIGH: Final = 64 * 1024
"""Bytes of a connection's unsent answer above which its writer waits (asyncio's default high-water
mark, set explicitly): what one connection queues is at most this plus the message being written."""

SLOW_PENDING: Final = 64 * 1024
"""Bytes of a connection's unsent data above which its client must read at `[serve] min_send_rate`
(below, a slow reader holds no more than this; `send_timeout` alone applies)."""

SEND_CHECK_INTERVAL: Final = 1.0
"""Seconds between two looks at a connection's unsent data while it has some (at most a quarter of
`send_timeout`)."""

_BLANK_LINE: Final = re.compile(rb"\n\r?\n")
"""The end of a request's headers, as h11 finds it."""
_BARE_LF: Final = re.compile(rb"(?<!\r)\n")
"""A line ending of LF alone."""
_OBS_FOLD: Final = re.compile(rb"\n[ \t]")
"""A line of the head that starts with a space or tab: an obs-fold (or whitespace before the first
header, which RFC 9112 section 2.2 also tells a server to refuse)."""

RESOURCE_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""The `accept` failures asyncio reports as "out of system resource" (and retries a second later)."""


class Phase(enum.Enum):
    """What a connection waits for from its client, named by its `[serve]` timeout: `IDLE`, no
    request under way (before the first byte, between requests), then closed; `HEAD`, a request's
    first byte has come but not all its headers (timed from that byte: more bytes do not restart
    it), then 408 and closed; `BODY`, the headers have come but not all the body, then 408 and closed."""

    IDLE = "idle_timeout"
    HEAD = "header_timeout"
    BODY = "body_timeout"


@dataclass(frozen=True)
class Bounds:
    """`[serve]` `max_connections` (after `fit_open_files`), the three timeouts of a client's sending,
    in seconds, `max_connections_per_client`, `send_timeout`, `min_send_rate` (bytes/s) and
    `max_pending_answers` (bytes)."""

    max_connections: int
    idle_timeout: float
    header_timeout: float
    body_timeout: float
    max_connections_per_client: int = 64
    send_timeout: float = 30.0
    min_send_rate: int = 8 * 1024
    max_pending_answers: int = 256 * 1024 * 1024

    def timeout(self, phase: Phase) -> float:
        timeouts: Mapping[Phase, float] = {
            Phase.IDLE: self.idle_timeout,
            Phase.HEAD: self.header_timeout,
            Phase.BODY: self.body_timeout,
        }
        return timeouts[phase]


def client_of_peer(peer: object) -> str:
    """The client a connection comes from, before anything of it is read: its remote address, named
    as sessions name it (`clients.client_of_address`: every loopback address is `loopback`, an IPv6
    address its /64)."""
    return client_of_address(str(peer[0])) if isinstance(peer, tuple) and peer else UNKNOWN


def _error(code: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message}}).encode()


def _response(status: str, code: str, message: str) -> bytes:
    body = _error(code, message)
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    return head.encode() + b"connection: close\r\n\r\n" + body


class ConnectionGuard:
    """What the connections of one server share: the count of open ones, the bounds, the throttled logs."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.open = 0
        self._per_client: dict[str, int] = {}
        cap = bounds.max_connections
        self.refusal = _response(
            "503 Service Unavailable",
            "limit-exceeded",
            f"too many connections: [serve] max_connections ({cap}) are open; try again later",
        )
        self.refusal_per_client = _response(
            "429 Too Many Requests",
            "limit-exceeded",
            f"too many connections from this client: [serve] max_connections_per_client "
            f"({bounds.max_connections_per_client}) are open; close one or try again later",
        )
        self.late: Mapping[Phase, bytes] = {
            phase: _response(
                "408 Request Timeout",
                "timeout",
                f"the request's {'headers' if phase is Phase.HEAD else 'body'} did not arrive within "
                f"[serve] {phase.value} ({bounds.timeout(phase):g} s)",
            )
            for phase in (Phase.HEAD, Phase.BODY)
        }
        budget = format_size(bounds.max_pending_answers)
        self.refusal_pending = _error(
            "limit-exceeded",
            f"the server holds too many answers waiting for slow clients: this one would take them over [serve] "
            f"max_pending_answers ({budget}); try again later",
        )
        self._log = LimitLog(logger)
        self._watches: set[SendWatch] = set()
        self.reserved = 0
        """Bytes of answers being handed to their connections (counted until they are in its buffer)."""

    def watch(self, sends: SendWatch) -> None:
        self._watches.add(sends)

    def unwatch(self, sends: SendWatch) -> None:
        self._watches.discard(sends)

    def pending(self) -> int:
        """Bytes of answers waiting for their clients, every connection together: in the transports'
        buffers (the host's memory) and the kernel's send queues (the machine's; on loopback the kernel
        takes megabytes of one answer)."""
        return self.reserved + sum(sends.unsent() for sends in self._watches)

    def over_budget(self, size: int) -> bool:
        """Whether an answer of `size` bytes would take what waits over `max_pending_answers` (one of at
        most `WRITE_BUFFER_HIGH` never does: each connection queues that much at most)."""
        return size > WRITE_BUFFER_HIGH and self.pending() + size > self.bounds.max_pending_answers

    def refused_answer(self, cut: bool) -> None:
        budget = format_size(self.bounds.max_pending_answers)
        what = "aborted a connection whose answer" if cut else "refused an answer (503): it"
        self._log.reached(
            "max_pending_answers",
            f"{what} would take the answers waiting for slow clients over [serve] max_pending_answers ({budget})",
        )

    def slow(self) -> None:
        """A connection was aborted: its client read what waited for it slower than `min_send_rate`."""
        self._log.reached(
            "min_send_rate",
            f"aborted a connection whose client read its answer slower than [serve] min_send_rate "
            f"({self.bounds.min_send_rate} bytes/s over send_timeout, {self.bounds.send_timeout:g} s)",
        )

    def admit(self, client: str) -> bytes | None:
        """Count one more open connection of `client`; or, at a cap, the answer that refuses it."""
        if self.open >= self.bounds.max_connections:
            self._log.reached(
                "max_connections", f"refused a connection: [serve] max_connections ({self.bounds.max_connections}) open"
            )
            return self.refusal
        held = self._per_client.get(client, 0)
        if held >= self.bounds.max_connections_per_client:
            cap = self.bounds.max_connections_per_client
            self._log.reached(
                "max_connections_per_client",
                f"refused a connection: client {client} holds [serve] max_connections_per_client ({cap})",
            )
            return self.refusal_per_client
        self.open += 1
        self._per_client[client] = held + 1
        return None

    def release(self, client: str) -> None:
        self.open -= 1
        held = self._per_client.pop(client, 1) - 1
        if held > 0:
            self._per_client[client] = held

    def stalled(self) -> None:
        """A connection was aborted: its client did not read what the server wrote."""
        timeout = self.bounds.send_timeout
        self._log.reached(
            "send_timeout",
            f"aborted a connection whose client did not read its answer: [serve] send_timeout ({timeout:g} s)",
        )

    def warned(self, message: str) -> None:
        """uvicorn warned about one request (`Invalid HTTP request received.`, `Unsupported upgrade
        request.`, ...): once per interval per message."""
        self._log.reached(f"uvicorn: {message}", f"uvicorn: {message}")

    def cut(self, phase: Phase) -> None:
        if phase is not Phase.IDLE:  # an idle connection closed is ordinary keep-alive expiry
            what = "its headers" if phase is Phase.HEAD else "its body"
            timeout = self.bounds.timeout(phase)
            self._log.reached(
                phase.value, f"closed a connection slow to send {what}: [serve] {phase.value} ({timeout:g} s)"
            )

    def accept_failed(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The loop's exception handler: `accept` failing for want of descriptors is throttled; anything
        else goes to the loop's default handler."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS and "socket" in context:
            self._log.reached("accept", f"cannot accept connections: {exc.strerror} (retried every second)")
            return
        loop.default_exception_handler(context)


def guarded_protocol(guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol under `guard` (give it to `uvicorn.Config(http=...)`). Raises
    `UvicornMismatch` when the installed uvicorn lacks what it relies on (`uvicorn_hooks.require`)."""
    require()

    class Guarded(GuardedProtocol):
        shared = guard

    return Guarded


class GuardedProtocol(EdgeProtocol):
    """uvicorn's h11 protocol, with the cap checked before anything is read (`connection_made`) and
    the `Phase` timer set again after every event that can change what the connection waits for;
    `shared` is set by `guarded_protocol`. It reaches uvicorn through `EdgeProtocol`'s hooks alone."""

    shared: ClassVar[ConnectionGuard]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._heads = BoundedHeads(h11.SERVER, MAX_HEADER_BYTES)
        self._admitted = False
        self._client = ""
        self._phase: Phase | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._sends: SendWatch | None = None
        super().__init__(*args, **kwargs)

    def own_h11(self, uvicorns: h11.Connection) -> h11.Connection:
        return self._heads

    def own_app(self, app: ASGIApp) -> ASGIApp:
        return AnswerBudget(app, self.shared, self._abort)

    def request_warning(self, message: str) -> None:
        self.shared.warned(message)

    def _abort(self) -> None:
        if self._sends is not None:
            self._sends.abort()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        client = client_of_peer(transport.get_extra_info("peername"))
        refusal = self.shared.admit(client)
        if refusal is not None:
            transport.write(refusal)
            transport.close()
            return
        self._admitted = True
        self._client = client
        transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        self._sends = SendWatch(transport, asyncio.get_running_loop(), self.shared)
        super().connection_made(self._sends)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._admitted:
            return
        self._admitted = False
        self.shared.release(self._client)
        self._arm(None)
        if self._sends is not None:
            self._sends.ended()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def response_done(self) -> None:
        self._watch()

    def refuse_request(self, why: str) -> None:
        """A request h11 (or `BoundedHeads`) refused: 400, in JSON naming why, closed."""
        if self._sends is None:  # refused at the cap: answered and closed already
            return
        message = f"not a valid HTTP request: {self._heads.refused or why}"
        self._sends.write(_response("400 Bad Request", ErrorCode.PROTOCOL.value, message))
        self._sends.close()

    def _watch(self) -> None:
        """Set the timer for what the connection now waits for."""
        phase: Phase | None = None
        if self._sends is not None and not self._sends.is_closing():
            theirs = self._heads.their_state
            if theirs is h11.IDLE:
                phase = Phase.HEAD if self._heads.trailing_data[0] else Phase.IDLE
            elif theirs is h11.SEND_BODY:
                phase = Phase.BODY
        if phase is not self._phase:
            self._arm(phase)

    def _arm(self, phase: Phase | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = phase
        if phase is not None and self._sends is not None:
            self._timer = self._sends.loop.call_later(self.shared.bounds.timeout(phase), self._expired, phase)

    def _expired(self, phase: Phase) -> None:
        self._timer = None
        if self._sends is None or self._sends.is_closing():
            return
        self.shared.cut(phase)
        answer_may_have_begun = phase is Phase.BODY and self.response_started() is not False
        if phase is not Phase.IDLE and not answer_may_have_begun:
            self._sends.write(self.shared.late[phase])
        self._sends.close()


class BoundedHeads(h11.Connection):
    """h11's server connection, refusing what h11 would take but a proxy in front may read otherwise
    (a `RemoteProtocolError`, which uvicorn answers with 400 and a close; `refused` says why):

    - a request line and headers over `max_head` bytes also when they arrive whole (h11 checks its
      limit only while a head is incomplete);
    - a line of the head ending with LF alone, and an obs-fold (a header line starting with a space
      or tab, continuing the one before), both of which h11 accepts (RFC 9112 sections 2.2 and 5.2);
    - a request with both Transfer-Encoding and Content-Length (RFC 9112 section 6.1: the server
      must close the connection after it; behind a proxy framing by Content-Length, what follows
      would be read as another request).

    The head is looked at in the bytes received, before h11 parses it; the framing headers in the
    request h11 parsed."""

    def __init__(self, our_role: type[h11.SERVER], max_head: int) -> None:
        super().__init__(our_role, max_incomplete_event_size=max_head)
        self._max_head = max_head
        self.refused: str | None = None

    def next_event(self) -> Any:
        try:
            if self.their_state is h11.IDLE:
                self._check_head(self.trailing_data[0])
            event = super().next_event()
            if isinstance(event, h11.Request):
                names = {name.lower() for name, _ in event.headers}
                if b"transfer-encoding" in names and b"content-length" in names:
                    raise h11.RemoteProtocolError(
                        "the request has both Transfer-Encoding and Content-Length: send one of them"
                    )
        except h11.RemoteProtocolError as exc:
            self.refused = str(exc)
            raise
        return event

    def _check_head(self, data: bytes) -> None:
        end = _BLANK_LINE.search(data, 0, self._max_head)
        if end is None:
            if len(data) > self._max_head:
                raise h11.RemoteProtocolError(
                    f"the request line and headers are larger than {self._max_head} bytes", error_status_hint=431
                )
            return
        head = data[: end.end()]
        if _BARE_LF.search(head):
            raise h11.RemoteProtocolError("a line of the request's head ends with LF alone: end every line with CRLF")
        if _OBS_FOLD.search(head):
            raise h11.RemoteProtocolError(
                "a header line continues the one before (obs-fold: it starts with a space or tab): send each "
                "header on one line"
            )


class SendWatch(asyncio.Transport):
    """The transport of one admitted connection, as the h11 protocol sees it: every call goes to the
    real transport; writes are counted, and while the server has unsent data for the connection (the
    transport's buffer plus the kernel's send queue) it is looked at every `SEND_CHECK_INTERVAL`: when
    none of it was delivered for `send_timeout` seconds, or, while more than `SLOW_PENDING` waits, less
    than `min_send_rate` bytes per second over the last `send_timeout` seconds, the connection is
    aborted. Its unsent data counts in the guard's `pending` while it is open."""

    def __init__(self, inner: asyncio.Transport, loop: asyncio.AbstractEventLoop, guard: ConnectionGuard) -> None:
        super().__init__()
        self._inner = inner
        self.loop = loop
        """The loop the connection is served on."""
        self._guard = guard
        self._written = 0
        self._delivered = 0
        self._stalled_since: float | None = None
        self._check: asyncio.TimerHandle | None = None
        self._interval = min(SEND_CHECK_INTERVAL, guard.bounds.send_timeout / 4)
        self._samples: collections.deque[tuple[float, int]] = collections.deque()
        """(time, bytes delivered) at each look while over `SLOW_PENDING`, spanning one `send_timeout`
        (so at most send_timeout / interval + 2 of them)."""
        guard.watch(self)

    def unsent(self) -> int:
        """Bytes written but not yet delivered: the transport's buffer and the kernel's send queue
        (`TIOCOUTQ`; where it cannot be read, the buffer alone)."""
        size = self._inner.get_write_buffer_size()
        sock = self._inner.get_extra_info("socket")
        if sock is not None:
            try:
                queued = bytearray(4)
                fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, queued)
                size += int.from_bytes(queued, "little", signed=True)
            except (OSError, ValueError):
                pass
        return size

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._inner.write(data)
        self._written += len(data)
        self._schedule()

    def _schedule(self) -> None:
        if self._check is None:
            self._check = self.loop.call_later(self._interval, self._look)

    def _look(self) -> None:
        self._check = None
        unsent = self.unsent()
        if unsent <= 0:
            self._stalled_since = None
            self._samples.clear()
            return
        now = self.loop.time()
        delivered = self._written - unsent
        if delivered > self._delivered or self._stalled_since is None:
            self._delivered = max(delivered, self._delivered)
            self._stalled_since = now
        elif now - self._stalled_since >= self._guard.bounds.send_timeout:
            self._guard.stalled()
            self._inner.abort()
            return
        if unsent <= SLOW_PENDING:
            self._samples.clear()
        elif self._too_slow(now, delivered):
            self._guard.slow()
            self._inner.abort()
            return
        self._schedule()

    def _too_slow(self, now: float, delivered: int) -> bool:
        """Whether less than `min_send_rate` was delivered over the last `send_timeout` seconds (False
        until the samples span that long)."""
        window = self._guard.bounds.send_timeout
        self._samples.append((now, delivered))
        while len(self._samples) > 1 and now - self._samples[1][0] >= window:
            self._samples.popleft()
        since, base = self._samples[0]
        return now - since >= window and delivered - base < self._guard.bounds.min_send_rate * (now - since)

    def ended(self) -> None:
        """The connection is gone: no more looks."""
        self._guard.unwatch(self)
        if self._check is not None:
            self._check.cancel()
            self._check = None

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def close(self) -> None:
        self._inner.close()

    def abort(self) -> None:
        self._inner.abort()

    def is_closing(self) -> bool:
        return self._inner.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        self._inner.resume_reading()

    def is_reading(self) -> bool:
        return self._inner.is_reading()

    def get_write_buffer_size(self) -> int:
        return self._inner.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._inner.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._inner.set_write_buffer_limits(high, low)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner.get_protocol()

    def can_write_eof(self) -> bool:
        return self._inner.can_write_eof()

    def write_eof(self) -> None:
        self._inner.write_eof()


class AnswerBudget:
    """ASGI middleware of one connection, holding what waits in every connection's buffer to `[serve]
    max_pending_answers` (`ConnectionGuard.over_budget`): a whole answer (its start names a
    content-length; its start is held until its body comes) that would take it over is replaced by a
    503 `limit-exceeded`, nothing of it sent; a body part of a response already under way (an event
    stream), by aborting the connection, its head being sent. Refusing the newcomer, rather than
    aborting the connection holding most, never cuts an answer already being delivered to a client
    that reads it; what slow readers hold ends within `send_timeout` (`min_send_rate`)."""

    def __init__(self, app: ASGIApp, guard: ConnectionGuard, abort: Callable[[], None]) -> None:
        self._app = app
        self._guard = guard
        self._abort = abort

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "HEAD":
            await self._app(scope, receive, send)
            return
        held: Message | None = None
        refused = False

        async def budgeted(message: Message) -> None:
            nonlocal held, refused
            if refused:
                return
            if message["type"] == "http.response.start" and any(
                name.lower() == b"content-length" for name, _ in message.get("headers", ())
            ):
                held = message
                return
            size = len(message.get("body", b"")) if message["type"] == "http.response.body" else 0
            if self._guard.over_budget(size):
                refused = True
                self._guard.refused_answer(cut=held is None)
                if held is None:
                    self._abort()
                else:
                    held = None
                    await _send_refusal(send, self._guard.refusal_pending)
                return
            if held is None:
                await send(message)
                return
            start, held = held, None
            self._guard.reserved += size
            try:
                await send(start)
                await send(message)
            finally:
                self._guard.reserved -= size

        await self._app(scope, receive, budgeted)
        if held is not None and not refused:
            await send(held)


async def _send_refusal(send: Send, body: bytes) -> None:
    """A 503 with JSON `body` through ASGI `send`."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def fit_open_files(wanted: int) -> int:
    """The connection cap to serve with: `wanted` when the open-file limit (RLIMIT_NOFILE) leaves
    `FD_RESERVE` descriptors beside it (raising the soft limit toward the hard one when needed), else
    what the limit leaves (a warning), so that idle sockets never reach the limit. Raises `UsageError`
    when it leaves none."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return wanted
    room = soft - FD_RESERVE
    if room < 1:
        raise UsageError(
            f"the open-file limit ({soft}) is too low to serve HTTP: {FD_RESERVE} descriptors are kept for the "
            "host besides the connections",
            hint=f"raise it (ulimit -n {needed}) or lower [serve] max_connections",
        )
    logger.warning(
        "[serve] max_connections = %d is lowered to %d: the open-file limit is %d (ulimit -n) and %d are kept "
        "for the host; raise the limit to %d to serve %d",
        wanted,
        room,
        soft,
        FD_RESERVE,
        needed,
        wanted,
    )
    return room
