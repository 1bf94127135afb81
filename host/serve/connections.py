"""The connections of `agent-host serve --http`: a cap, and a time limit on every wait for a client.

uvicorn's h11 protocol times keep-alive only: a client that sent nothing, or its headers or body a
byte at a time, held its socket for ever, and enough of them reached the open-file limit. So
`guarded_protocol` is uvicorn's `H11Protocol` with one timer per connection, set by what it waits
for (`Phase`); none runs while a request is answered (a long call, an SSE stream). Beyond `[serve]
max_connections` a connection gets a fixed 503 `limit-exceeded`, unread, and is closed;
`fit_open_files` fits the cap under RLIMIT_NOFILE. Refusals, timeouts and `accept` failing for
want of descriptors are logged through `limit_log.LimitLog`, never once per event.
"""

from __future__ import annotations

import asyncio
import enum
import errno
import json
import logging
import resource
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from host.errors import UsageError
from host.serve.limit_log import LimitLog

logger = logging.getLogger(__name__)

ACCEPT_BATCH: Final = 128
"""Connections the listening socket queues, which is also how many asyncio accepts in one go."""

FD_RESERVE: Final = 384
"""File descriptors kept beside `[serve] max_connections` for everything else: an accept batch
(`ACCEPT_BATCH`) of connections refused at the cap, the guests' files, servers' pipes, logs."""

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
    """`[serve]` `max_connections` (after `fit_open_files`) and the three timeouts, in seconds."""

    max_connections: int
    idle_timeout: float
    header_timeout: float
    body_timeout: float

    def timeout(self, phase: Phase) -> float:
        timeouts: Mapping[Phase, float] = {
            Phase.IDLE: self.idle_timeout,
            Phase.HEAD: self.header_timeout,
            Phase.BODY: self.body_timeout,
        }
        return timeouts[phase]


def _response(status: str, code: str, message: str) -> bytes:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    return head.encode() + b"connection: close\r\n\r\n" + body


class ConnectionGuard:
    """What the connections of one server share: the count of open ones, the bounds, the throttled logs."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.open = 0
        cap = bounds.max_connections
        self.refusal = _response(
            "503 Service Unavailable",
            "limit-exceeded",
            f"too many connections: [serve] max_connections ({cap}) are open; try again later",
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
        self._log = LimitLog(logger)

    def admit(self) -> bool:
        """Count one more open connection, or refuse it (False) at the cap."""
        if self.open >= self.bounds.max_connections:
            self._log.reached(
                "max_connections", f"refused a connection: [serve] max_connections ({self.bounds.max_connections}) open"
            )
            return False
        self.open += 1
        return True

    def release(self) -> None:
        self.open -= 1

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
    """uvicorn's h11 protocol under `guard` (give it to `uvicorn.Config(http=...)`)."""

    class Guarded(GuardedProtocol):
        shared = guard

    return Guarded


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol, with the cap checked before anything is read (`connection_made`) and
    the `Phase` timer set again after every event that can change what the connection waits for;
    `shared` is set by `guarded_protocol`."""

    shared: ClassVar[ConnectionGuard]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._admitted = False
        self._phase: Phase | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self.shared.admit():
            transport.write(self.shared.refusal)
            transport.close()
            return
        self._admitted = True
        super().connection_made(transport)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._admitted:
            return
        self._admitted = False
        self.shared.release()
        self._arm(None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._unset_keepalive_if_required()  # uvicorn's keep-alive timer: the IDLE phase replaces it
        self._watch()

    def _watch(self) -> None:
        """Set the timer for what the connection now waits for."""
        phase: Phase | None = None
        if not self.transport.is_closing():
            theirs = self.conn.their_state
            if theirs is h11.IDLE:
                phase = Phase.HEAD if self.conn.trailing_data[0] else Phase.IDLE
            elif theirs is h11.SEND_BODY:
                phase = Phase.BODY
        if phase is not self._phase:
            self._arm(phase)

    def _arm(self, phase: Phase | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = phase
        if phase is not None:
            self._timer = self.loop.call_later(self.shared.bounds.timeout(phase), self._expired, phase)

    def _expired(self, phase: Phase) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        self.shared.cut(phase)
        answered = self.cycle is not None and self.cycle.response_started and phase is Phase.BODY
        if phase is not Phase.IDLE and not answered:
            self.transport.write(self.shared.late[phase])
        self.transport.close()


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
        wanted, room, soft, FD_RESERVE, needed, wanted,
    )  # fmt: skip
    return room
