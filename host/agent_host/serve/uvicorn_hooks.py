"""The one door to uvicorn's internals: every use of a private module, class or method of uvicorn is here.

`serve --http` guards each connection inside uvicorn's h11 protocol (`EdgeProtocol`, a subclass of the
private `uvicorn.protocols.http.h11_impl.H11Protocol`) and hears when uvicorn begins to stop (`server`).
At import each hook's names, signatures and the state it replaces are checked (`UNAVAILABLE`: why a hook
is not usable). `require()`, at the start of `serve --http`, refuses with `UvicornMismatch`, naming the
installed uvicorn and `TESTED_WITH`, when the one hook without a fallback (`protocol`) is unusable; any
other hook unusable is logged once as a warning and takes the fallback `FALLBACKS` names, which serves
within the same bounds. Nothing else of the package names a uvicorn module but `uvicorn` itself, nor a
name of `H11Protocol` but asyncio's protocol methods (an import-linter contract and
tests/unit/serve/test_uvicorn_hooks.py check it); a subclass of `EdgeProtocol` uses its hooks.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import logging
import re
import socket
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, cast

import h11
import uvicorn
from starlette.types import ASGIApp

from agent_host.errors import UvicornMismatch

logger = logging.getLogger(__name__)

_H11Protocol: Any
_Cycle: Any
try:
    from uvicorn.protocols.http import h11_impl as _h11_impl  # private: uvicorn's h11 protocol

    _H11Protocol = getattr(_h11_impl, "H11Protocol", None)
    _Cycle = getattr(_h11_impl, "RequestResponseCycle", None)
except ImportError:  # another layout of uvicorn: the `protocol` hook is unusable, `require()` refuses
    _H11Protocol = _Cycle = None

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base
else:  # without it `EdgeProtocol` is never made: `require()` refuses first
    _Base = _H11Protocol if isinstance(_H11Protocol, type) else asyncio.Protocol

TESTED_WITH: Final = ((0, 31, 1), (0, 56))
"""The uvicorn releases the hooks were tested with: from the first (included) to the second (excluded);
pyproject declares the same range (`tested_range()`)."""

UVICORN_VERSION: Final = importlib.metadata.version("uvicorn")

Hook = Literal[
    "protocol", "keep_alive_timer", "bad_request_answer", "request_warnings", "response_started", "shutdown_notice"
]
HOOKS: Final[tuple[Hook, ...]] = (
    "protocol",
    "keep_alive_timer",
    "bad_request_answer",
    "request_warnings",
    "response_started",
    "shutdown_notice",
)

FALLBACKS: Final[Mapping[Hook, str]] = {
    "keep_alive_timer": "uvicorn's keep-alive timer stays armed after each response, beside the host's timers: set to "
    "[serve] idle_timeout rounded up, it closes a connection whose client sends nothing that long after a response, "
    "as the idle timer does",
    "bad_request_answer": "a request h11 refuses gets uvicorn's own 400 (plain text, then closed) instead of the JSON "
    "one naming why",
    "request_warnings": "uvicorn's warning about each bad request is logged as it comes, not once per interval",
    "response_started": "a request body that comes too late closes its connection without a 408 (an answer to it may "
    "have begun)",
    "shutdown_notice": "calls in flight are not told that the server stops: those still running at uvicorn's "
    "graceful-shutdown timeout are cancelled with their connections, not answered `cancelled`",
}
"""What each hook but `protocol` does without its uvicorn internal: the same bounds, coarser answers."""


def tested_range() -> str:
    """`TESTED_WITH` as a version specifier: `>=0.31.1,<0.56`."""
    low, high = (".".join(map(str, bound)) for bound in TESTED_WITH)
    return f">={low},<{high}"


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of `version` (`0.55.0rc1` → (0, 55, 0))."""
    numbers = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(part) for part in numbers.group().split(".")) if numbers else ()


def is_tested(version: str) -> bool:
    low, high = TESTED_WITH
    return low <= _release(version) < high


# -- checks ---------------------------------------------------------------------------------------


def _source(function: object) -> str:
    try:
        return inspect.getsource(cast(Callable[..., Any], function))
    except (OSError, TypeError):
        return ""


def _sets(source: str, attribute: str) -> bool:
    """Whether `source` assigns `self.<attribute>` (annotated or not)."""
    return re.search(rf"self\.{attribute}\s*(?::[^=\n]*)?=(?!=)", source) is not None


def _parameters(function: object) -> list[str]:
    try:
        return list(inspect.signature(cast(Callable[..., Any], function)).parameters)
    except (TypeError, ValueError):
        return []


def _member(owner: object, name: str) -> Any:
    """`owner.name`, or None."""
    return getattr(owner, name, None)


def _check_protocol() -> str | None:
    """`H11Protocol`, built by uvicorn with keywords, whose `conn` (the h11 connection) and `app` the
    subclass replaces after `__init__`, and whose `on_response_complete` each request's cycle calls."""
    if not isinstance(_H11Protocol, type) or not issubclass(_H11Protocol, asyncio.Protocol):
        return "uvicorn has no uvicorn.protocols.http.h11_impl.H11Protocol"
    if _parameters(_member(_H11Protocol, "__init__"))[:4] != ["self", "config", "server_state", "app_state"]:
        return "H11Protocol.__init__ has another signature"
    missing = [
        f"H11Protocol.{name}"
        for name in ("connection_made", "connection_lost", "data_received", "handle_events", "on_response_complete")
        if not callable(_member(_H11Protocol, name))
    ]
    if missing:
        return f"missing {', '.join(missing)}"
    init, events = _source(_member(_H11Protocol, "__init__")), _source(_member(_H11Protocol, "handle_events"))
    for attribute in ("conn", "app"):
        if not _sets(init, attribute):
            return f"H11Protocol.__init__ sets no self.{attribute}"
    if "self.conn.next_event()" not in events or "self.app" not in events:
        return "H11Protocol.handle_events reads its h11 connection or its app elsewhere"
    completion = _parameters(_member(_H11Protocol, "on_response_complete"))
    if "self.on_response_complete" not in events or completion != ["self"]:
        return "H11Protocol.on_response_complete is no longer each request's completion callback"
    return None


def _check_keep_alive_timer() -> str | None:
    unset = _member(_H11Protocol, "_unset_keepalive_if_required")
    if not callable(unset):
        return "missing H11Protocol._unset_keepalive_if_required"
    if _parameters(unset) != ["self"]:
        return "H11Protocol._unset_keepalive_if_required has another signature"
    return None


def _check_bad_request_answer() -> str | None:
    answer = _member(_H11Protocol, "send_400_response")
    if not callable(answer):
        return "missing H11Protocol.send_400_response"
    events = _source(_member(_H11Protocol, "handle_events"))
    if _parameters(answer) != ["self", "msg"] or "self.send_400_response(" not in events:
        return "H11Protocol.send_400_response has another signature or is not what answers a refused request"
    return None


def _check_request_warnings() -> str | None:
    if not _sets(_source(_member(_H11Protocol, "__init__")), "logger"):
        return "H11Protocol.__init__ sets no self.logger"
    if "self.logger.warning(" not in _source(_H11Protocol):
        return "H11Protocol warns about bad requests elsewhere than self.logger"
    return None


def _check_response_started() -> str | None:
    if not _sets(_source(_member(_Cycle, "__init__")), "response_started"):
        return "uvicorn has no RequestResponseCycle.response_started"
    if not _sets(_source(_member(_H11Protocol, "__init__")), "cycle"):
        return "H11Protocol.__init__ sets no self.cycle"
    return None


def _check_shutdown_notice() -> str | None:
    shutdown = _member(uvicorn.Server, "shutdown")
    if not inspect.iscoroutinefunction(shutdown) or _parameters(shutdown) != ["self", "sockets"]:
        return "uvicorn.Server.shutdown has another signature"
    if "self.shutdown(sockets=sockets)" not in _source(uvicorn.Server):
        return "uvicorn.Server no longer calls shutdown(sockets=...) when it stops"
    return None


_CHECKS: Final[Mapping[Hook, Callable[[], str | None]]] = {
    "protocol": _check_protocol,
    "keep_alive_timer": _check_keep_alive_timer,
    "bad_request_answer": _check_bad_request_answer,
    "request_warnings": _check_request_warnings,
    "response_started": _check_response_started,
    "shutdown_notice": _check_shutdown_notice,
}


def _check(hook: Hook) -> str | None:
    """Why `hook` is not usable with the installed uvicorn (None: usable)."""
    try:
        if hook != "protocol" and hook != "shutdown_notice" and _check_protocol() is not None:
            return "no usable H11Protocol"
        return _CHECKS[hook]()
    except Exception as exc:  # boundary: a check that cannot even run means the hook is not usable
        return f"its check failed: {type(exc).__name__}: {exc}"


UNAVAILABLE: Final[dict[Hook, str | None]] = {hook: _check(hook) for hook in HOOKS}
"""Why each hook is not usable here (None: usable). Tests set an entry to force the fallback."""

_warned: set[str] = set()


def _warn_once(key: str, message: str, *args: object) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message, *args)


def available(hook: Hook) -> bool:
    """Whether `hook` is usable with the installed uvicorn; the first time it is not, a warning says
    why and what serves instead (`FALLBACKS`)."""
    reason = UNAVAILABLE[hook]
    if reason is None:
        return True
    _warn_once(hook, "uvicorn %s: %s; instead %s", UVICORN_VERSION, reason, FALLBACKS.get(hook, "nothing"))
    return False


def require() -> None:
    """Check that the installed uvicorn can serve `serve --http` safely (at its start): raises
    `UvicornMismatch` when the `protocol` hook is unusable; warns once about an untested uvicorn and
    each hook that takes its fallback."""
    reason = UNAVAILABLE["protocol"]
    if reason is not None:
        raise UvicornMismatch(
            f"the installed uvicorn {UVICORN_VERSION} lacks what agent-host serve --http guards its connections "
            f"with ({reason}); agent-host was tested with uvicorn{tested_range()}",
            hint=f"install a tested release: pip install 'uvicorn{tested_range()}'",
        )
    if not is_tested(UVICORN_VERSION):
        _warn_once(
            "version",
            "uvicorn %s is not a release agent-host was tested with (uvicorn%s); its internals were checked and fit",
            UVICORN_VERSION,
            tested_range(),
        )
    for hook in HOOKS:
        available(hook)


# -- protocol: uvicorn's h11 protocol, its internals behind named hooks -------------------------------


class _Warnings:
    """uvicorn's logger for one connection, whose warnings (one per bad request) go to `warn`;
    everything else reaches uvicorn's logger as it is."""

    def __init__(self, inner: logging.Logger, warn: Callable[[str], None]) -> None:
        self._inner = inner
        self._warn = warn

    @property
    def level(self) -> int:
        return self._inner.level

    def warning(self, message: str, *args: object, **kwargs: Any) -> None:
        self._warn(message % args if args else message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class EdgeProtocol(_Base):
    """uvicorn's h11 protocol, whose internals a subclass reaches only through these hooks: `own_h11`
    and `own_app` (the h11 connection and the ASGI app it serves, set once), `request_warning` (uvicorn
    warned about one request), `refuse_request` (answer a request h11 refused, then close),
    `response_done` (after each response; uvicorn's keep-alive timer is already unset) and
    `response_started` (whether the current request's answer has begun). Beside them, a subclass
    overrides only asyncio's protocol methods (`connection_made`, `connection_lost`, `data_received`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = self.own_h11(self.conn)
        self.app = cast(Any, self.own_app(cast(ASGIApp, self.app)))
        if available("request_warnings"):
            self.logger = cast(logging.Logger, _Warnings(self.logger, self.request_warning))

    def own_h11(self, uvicorns: h11.Connection) -> h11.Connection:
        """The h11 connection to serve with (by default uvicorn's)."""
        return uvicorns

    def own_app(self, app: ASGIApp) -> ASGIApp:
        """The ASGI app this connection serves (by default `app`, the server's)."""
        return app

    def request_warning(self, message: str) -> None:
        """uvicorn warned about one request (`Invalid HTTP request received.`, ...)."""
        logging.getLogger("uvicorn.error").warning("%s", message)

    def refuse_request(self, why: str) -> None:
        """Answer a request h11 refused (`why`: uvicorn's words) and close (by default uvicorn's 400)."""
        super().send_400_response(why)

    def response_done(self) -> None:
        """A response was completed (uvicorn's keep-alive timer unset, when that hook is usable)."""

    def response_started(self) -> bool | None:
        """Whether the answer to the current request has begun; None when uvicorn does not say."""
        if not available("response_started"):
            return None
        return self.cycle is not None and bool(self.cycle.response_started)

    # -- uvicorn's internals ------------------------------------------------------------------------

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if available("keep_alive_timer"):
            self._unset_keepalive_if_required()  # uvicorn's keep-alive timer: the subclass's idle timer replaces it
        self.response_done()

    def send_400_response(self, *args: Any, **kwargs: Any) -> None:
        if available("bad_request_answer") and len(args) == 1 and not kwargs:
            self.refuse_request(str(args[0]))
        else:
            super().send_400_response(*args, **kwargs)


# -- shutdown_notice: when uvicorn begins to stop --------------------------------------------------------


class _NoticingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, notice: Callable[[], None]) -> None:
        super().__init__(config)
        self._notice = notice

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._notice()
        await super().shutdown(sockets=sockets)


def server(config: uvicorn.Config, notice: Callable[[], None]) -> uvicorn.Server:
    """uvicorn's server for `config`, calling `notice` (on its loop) when it begins to stop, before it
    closes connections and waits for their requests. Hook: `Server.shutdown`, overridden. Fallback:
    uvicorn's server as it is (`FALLBACKS`)."""
    if available("shutdown_notice"):
        return _NoticingServer(config, notice)
    return uvicorn.Server(config)
