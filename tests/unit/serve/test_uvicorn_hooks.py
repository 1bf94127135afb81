"""The one door to uvicorn's internals (`serve.uvicorn_hooks`): each hook works on the installed uvicorn,
a missing internal (simulated with monkeypatch) makes it take its fallback or, for `protocol`, refuse
`serve --http` naming the version and the tested range; no other module reaches past uvicorn's public
names. A connection is driven in-process: uvicorn's protocol on a recording transport, on this loop.
"""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import pkgutil
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import h11
import pytest
import starlette
import uvicorn
import uvicorn.protocols.http.h11_impl as h11_impl
from packaging.requirements import Requirement
from starlette.types import Receive, Scope, Send
from uvicorn.server import ServerState

from agent_host.errors import UvicornMismatch
from agent_host.serve import uvicorn_hooks
from agent_host.serve.connections import Bounds, ConnectionGuard, GuardedProtocol, Phase, guarded_protocol
from agent_host.serve.uvicorn_hooks import EdgeProtocol

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "host" / "agent_host"
DOOR = PACKAGE / "serve" / "uvicorn_hooks.py"
WAIT: Final = 10.0
"""Seconds a request in-process may take to be answered."""
BOUNDS = Bounds(max_connections=8, idle_timeout=5, header_timeout=10, body_timeout=30)
BAD_REQUEST = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc"
"""A request framed two ways, which h11 takes and `BoundedHeads` refuses."""


class Recording(asyncio.Transport):
    """A connection's transport that keeps what is written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def hello(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"hi"})


class Served:
    """One connection of `protocol` (a class `uvicorn.Config(http=...)` takes) serving `app`."""

    def __init__(self, protocol: type[asyncio.Protocol], app: Any = hello) -> None:
        config = uvicorn.Config(app, http=protocol, ws="none", lifespan="off", log_config=None)
        self.state = ServerState()
        self.protocol: Any = protocol(config=config, server_state=self.state, app_state={})  # type: ignore[call-arg]
        self.transport = Recording()
        self.protocol.connection_made(self.transport)

    async def send(self, data: bytes) -> None:
        """Send `data` and wait for the requests it started to be answered."""
        self.protocol.data_received(data)
        await self.answered()

    async def answered(self) -> None:
        if self.state.tasks:
            await asyncio.wait_for(asyncio.gather(*self.state.tasks), WAIT)

    def close(self) -> None:
        self.protocol.connection_lost(None)

    def body(self) -> bytes:
        return bytes(self.transport.written).partition(b"\r\n\r\n")[2]


@pytest.fixture
def guard() -> ConnectionGuard:
    return ConnectionGuard(BOUNDS)


@pytest.fixture
def fallback(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`force(hook)` makes `hook` unusable for the test, as its check does when uvicorn lacks its internal;
    its warning is logged anew."""

    def force(hook: uvicorn_hooks.Hook) -> None:
        monkeypatch.setitem(uvicorn_hooks.UNAVAILABLE, hook, "forced by the test")

    monkeypatch.setattr(uvicorn_hooks, "_warned", set())
    yield force


class Kept(logging.Handler):
    """Keeps the messages of the records it is given."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def door_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == uvicorn_hooks.__name__]


# -- the installed uvicorn, the declared range --------------------------------------------------------


def test_every_hook_is_usable_on_the_installed_uvicorn_a_tested_release() -> None:
    assert uvicorn_hooks.UNAVAILABLE == dict.fromkeys(uvicorn_hooks.HOOKS)
    assert uvicorn_hooks.is_tested(uvicorn_hooks.UVICORN_VERSION), uvicorn_hooks.UVICORN_VERSION
    assert set(uvicorn_hooks.FALLBACKS) == set(uvicorn_hooks.HOOKS) - {"protocol"}


def test_pyproject_declares_the_tested_range_of_uvicorn() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    [declared] = [Requirement(d) for d in project["dependencies"] if Requirement(d).name == "uvicorn"]
    assert {str(s) for s in declared.specifier} == set(uvicorn_hooks.tested_range().split(","))
    assert uvicorn_hooks.tested_range() == ">=0.31.1,<0.56"


def test_an_untested_uvicorn_is_served_when_its_internals_fit_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, fallback: Any, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(uvicorn_hooks, "UVICORN_VERSION", "0.99.0")
    assert not uvicorn_hooks.is_tested("0.99.0") and not uvicorn_hooks.is_tested("0.30.6")
    with caplog.at_level(logging.WARNING):
        uvicorn_hooks.require()
        uvicorn_hooks.require()
    assert door_warnings(caplog) == [
        "uvicorn 0.99.0 is not a release agent-host was tested with (uvicorn>=0.31.1,<0.56); its internals were "
        "checked and fit"
    ]


# -- protocol: no fallback, a refusal --------------------------------------------------------------


async def test_the_protocol_hook_serves_with_the_subclasss_own_h11_connection_and_app() -> None:
    seen: list[str] = []

    class Own(EdgeProtocol):
        def own_h11(self, uvicorns: h11.Connection) -> h11.Connection:
            seen.append("h11")
            return h11.Connection(h11.SERVER)

        def own_app(self, app: Any) -> Any:
            async def app_of_this_connection(scope: Scope, receive: Receive, send: Send) -> None:
                seen.append("app")
                await app(scope, receive, send)

            return app_of_this_connection

    served = Served(Own)
    await served.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    served.close()
    assert seen == ["h11", "app"]
    assert bytes(served.transport.written).startswith(b"HTTP/1.1 200 OK") and served.body() == b"hi"


def test_a_uvicorn_without_the_h11_protocol_is_refused_naming_its_version_and_the_tested_range(
    monkeypatch: pytest.MonkeyPatch, guard: ConnectionGuard
) -> None:
    with monkeypatch.context() as patched:
        patched.delattr(h11_impl.H11Protocol, "on_response_complete")
        assert uvicorn_hooks._check("protocol") == "missing H11Protocol.on_response_complete"
        assert uvicorn_hooks._check("keep_alive_timer") == "no usable H11Protocol"
    with monkeypatch.context() as patched:
        patched.setattr(uvicorn_hooks, "_H11Protocol", None)  # the private module moved
        assert uvicorn_hooks._check("protocol") == "uvicorn has no uvicorn.protocols.http.h11_impl.H11Protocol"
    monkeypatch.setitem(uvicorn_hooks.UNAVAILABLE, "protocol", "missing H11Protocol.on_response_complete")
    with pytest.raises(UvicornMismatch) as refused:
        guarded_protocol(guard)
    assert refused.value.reference == "uvicorn-mismatch"
    assert str(refused.value) == (
        f"the installed uvicorn {uvicorn_hooks.UVICORN_VERSION} lacks what agent-host serve --http guards its "
        "connections with (missing H11Protocol.on_response_complete); agent-host was tested with "
        "uvicorn>=0.31.1,<0.56\n  hint: install a tested release: pip install 'uvicorn>=0.31.1,<0.56'"
    )


# -- keep_alive_timer --------------------------------------------------------------------------------


async def test_after_a_response_the_idle_timer_replaces_uvicorns_keep_alive_timer(guard: ConnectionGuard) -> None:
    served = Served(guarded_protocol(guard))
    await served.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert served.protocol.timeout_keep_alive_task is None
    assert served.protocol._phase is Phase.IDLE and served.protocol._timer is not None
    served.close()


async def test_without_unset_keepalive_uvicorns_timer_stays_beside_the_idle_timer_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, fallback: Any, guard: ConnectionGuard, caplog: pytest.LogCaptureFixture
) -> None:
    with monkeypatch.context() as patched:
        patched.delattr(h11_impl.H11Protocol, "_unset_keepalive_if_required")
        assert uvicorn_hooks._check("keep_alive_timer") == "missing H11Protocol._unset_keepalive_if_required"
    fallback("keep_alive_timer")
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            served = Served(guarded_protocol(guard))
            await served.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert served.protocol.timeout_keep_alive_task is not None
            assert served.protocol._phase is Phase.IDLE and served.protocol._timer is not None
            served.close()
    assert door_warnings(caplog) == [
        f"uvicorn {uvicorn_hooks.UVICORN_VERSION}: forced by the test; instead "
        f"{uvicorn_hooks.FALLBACKS['keep_alive_timer']}"
    ]


# -- bad_request_answer --------------------------------------------------------------------------------


async def test_a_refused_request_is_answered_400_in_json_naming_why(guard: ConnectionGuard) -> None:
    served = Served(guarded_protocol(guard))
    await served.send(BAD_REQUEST)
    assert bytes(served.transport.written).startswith(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json")
    assert json.loads(served.body())["error"] == {
        "code": "protocol",
        "message": "not a valid HTTP request: the request has both Transfer-Encoding and Content-Length: send one "
        "of them",
    }
    assert served.transport.closed
    served.close()


async def test_without_send_400_response_a_refused_request_gets_uvicorns_own_400(
    monkeypatch: pytest.MonkeyPatch, fallback: Any, guard: ConnectionGuard
) -> None:
    def other(self: Any, msg: str, status: int) -> None:
        pass

    with monkeypatch.context() as patched:
        patched.setattr(h11_impl.H11Protocol, "send_400_response", other)
        assert uvicorn_hooks._check("bad_request_answer") == (
            "H11Protocol.send_400_response has another signature or is not what answers a refused request"
        )
    fallback("bad_request_answer")
    served = Served(guarded_protocol(guard))
    await served.send(BAD_REQUEST)
    assert bytes(served.transport.written).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"content-type: text/plain" in served.transport.written
    assert b"Invalid HTTP request received." in served.body() and served.transport.closed
    served.close()


# -- request_warnings ---------------------------------------------------------------------------------


async def test_uvicorns_warnings_about_bad_requests_are_logged_once_per_interval(
    guard: ConnectionGuard, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            served = Served(guarded_protocol(guard))
            await served.send(BAD_REQUEST)
            served.close()
    assert [r.getMessage() for r in caplog.records] == [
        "uvicorn: Invalid HTTP request received.; reported once per 30 s"
    ]


async def test_without_its_logger_uvicorns_warnings_are_logged_each_time(
    monkeypatch: pytest.MonkeyPatch, fallback: Any, guard: ConnectionGuard, caplog: pytest.LogCaptureFixture
) -> None:
    def init_without_logger(self: Any, config: Any, server_state: Any, app_state: Any, _loop: Any = None) -> None:
        self.conn = self.app = None

    with monkeypatch.context() as patched:
        patched.setattr(h11_impl.H11Protocol, "__init__", init_without_logger)
        assert uvicorn_hooks._check("request_warnings") == "H11Protocol.__init__ sets no self.logger"
    fallback("request_warnings")
    uvicorns = Kept()
    logging.getLogger("uvicorn.error").addHandler(uvicorns)  # uvicorn's logger may not propagate to the root
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(3):
                served = Served(guarded_protocol(guard))
                await served.send(BAD_REQUEST)
                served.close()
    finally:
        logging.getLogger("uvicorn.error").removeHandler(uvicorns)
    assert uvicorns.messages == ["Invalid HTTP request received."] * 3
    assert len(door_warnings(caplog)) == 1


# -- response_started ---------------------------------------------------------------------------------


async def stalled_upload(scope: Scope, receive: Receive, send: Send) -> None:
    """Reads until the client hangs up (a body that never ends)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def answering_early(began: asyncio.Event) -> Any:
    """An app that begins its answer before the body has come (then sets `began`), then reads until
    the client hangs up."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        began.set()
        await stalled_upload(scope, receive, send)

    return app


UPLOAD = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"
"""A request whose body stops after 3 of its 10 bytes."""


async def body_timeout(protocol: type[asyncio.Protocol], app: Any, began: asyncio.Event | None = None) -> bytes:
    """What a connection writes when its body timer fires (called here rather than waited for), once
    `began` is set when given."""
    served = Served(protocol, app)
    served.protocol.data_received(UPLOAD)
    if began is not None:
        await asyncio.wait_for(began.wait(), WAIT)
    assert served.protocol._phase is Phase.BODY
    served.protocol._expired(Phase.BODY)
    assert served.transport.closed
    served.close()
    await served.answered()
    return bytes(served.transport.written)


async def test_a_late_body_is_answered_408_unless_the_answer_has_begun(guard: ConnectionGuard) -> None:
    assert (await body_timeout(guarded_protocol(guard), stalled_upload)).startswith(b"HTTP/1.1 408 Request Timeout")
    began = asyncio.Event()
    begun = await body_timeout(guarded_protocol(guard), answering_early(began), began)
    assert begun.startswith(b"HTTP/1.1 200 OK") and b"408" not in begun


async def test_without_the_cycles_response_started_a_late_body_closes_without_a_408(
    monkeypatch: pytest.MonkeyPatch, fallback: Any, guard: ConnectionGuard
) -> None:
    with monkeypatch.context() as patched:
        patched.setattr(uvicorn_hooks, "_Cycle", None)
        assert uvicorn_hooks._check("response_started") == "uvicorn has no RequestResponseCycle.response_started"
    fallback("response_started")
    assert await body_timeout(guarded_protocol(guard), stalled_upload) == b""


# -- shutdown_notice ----------------------------------------------------------------------------------


async def test_the_server_tells_when_it_begins_to_stop_before_uvicorn_stops(
    monkeypatch: pytest.MonkeyPatch, fallback: Any
) -> None:
    steps: list[str] = []

    async def uvicorns_shutdown(self: uvicorn.Server, sockets: Any = None) -> None:
        steps.append("uvicorn")

    monkeypatch.setattr(uvicorn.Server, "shutdown", uvicorns_shutdown)
    config = uvicorn.Config(hello, log_config=None)
    await uvicorn_hooks.server(config, lambda: steps.append("notice")).shutdown(sockets=None)
    assert steps == ["notice", "uvicorn"]
    steps.clear()
    fallback("shutdown_notice")
    plain = uvicorn_hooks.server(config, lambda: steps.append("notice"))
    await plain.shutdown(sockets=None)
    assert type(plain) is uvicorn.Server and steps == ["uvicorn"]


def test_a_server_whose_shutdown_changed_takes_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    def shutdown(self: uvicorn.Server) -> None:
        pass

    monkeypatch.setattr(uvicorn.Server, "shutdown", shutdown)
    assert uvicorn_hooks._check("shutdown_notice") == "uvicorn.Server.shutdown has another signature"


# -- no other module reaches past uvicorn's public names ------------------------------------------------


def _private_names(package: Any) -> set[str]:
    """Every `_name` (not dunder) that `package`'s source defines or uses."""
    names: set[str] = set()
    for path in Path(package.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = (
                [node.name]
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                else [node.attr]
                if isinstance(node, ast.Attribute)
                else []
            )
            names |= {name for name in found if name.startswith("_") and not name.startswith("__")}
    return names


ASYNCIO_PROTOCOL: Final = frozenset(vars(asyncio.Protocol)) | frozenset(vars(asyncio.BaseProtocol))
EDGE_HOOKS: Final = frozenset(
    {"own_h11", "own_app", "request_warning", "refuse_request", "response_done", "response_started"}
)


def _uvicorn_protocol_names() -> set[str]:
    """The names of `H11Protocol` (methods, and instance state its source sets) that are not asyncio's."""
    source = ast.parse(Path(h11_impl.__file__).read_text(encoding="utf-8"))
    [klass] = [n for n in ast.walk(source) if isinstance(n, ast.ClassDef) and n.name == "H11Protocol"]
    state = {
        n.attr
        for n in ast.walk(klass)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    } | set(vars(h11_impl.H11Protocol))
    return {name for name in state if not name.startswith("__")} - ASYNCIO_PROTOCOL - EDGE_HOOKS


def _touches(path: Path, private: set[str], protocol_names: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    edge: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.startswith("uvicorn.")]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            top = node.module.split(".")[0]
            if node.module.startswith("uvicorn."):
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif node.module == "uvicorn":
                found += [f"{node.lineno}: uvicorn.{a.name}" for a in node.names if a.name not in uvicorn.__all__]
            elif top in ("h11", "starlette") and any(p.startswith("_") for p in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module} import ...")
            if node.module == "agent_host.serve.uvicorn_hooks":
                edge |= {a.asname or a.name for a in node.names if a.name == "EdgeProtocol"}
        elif isinstance(node, ast.Attribute) and node.attr in private:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{node.lineno}: .{node.attr}")
    for node in ast.walk(tree):  # classes built on the door's protocol: its hooks and asyncio's methods only
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id in edge for b in node.bases):
            edge.add(node.name)
            for inner in ast.walk(node):
                if isinstance(inner, ast.FunctionDef) and inner.name in protocol_names:
                    found.append(f"{inner.lineno}: {node.name}.{inner.name} overrides H11Protocol's")
                elif (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == "self"
                    and inner.attr in protocol_names
                ):
                    found.append(f"{inner.lineno}: self.{inner.attr} is H11Protocol's")
    return found


def _package_files() -> Iterable[Path]:
    return (path for path in sorted(PACKAGE.rglob("*.py")) if path != DOOR)


def test_no_module_but_the_door_touches_uvicorns_internals_or_private_names_of_h11_and_starlette() -> None:
    private = _private_names(uvicorn) | _private_names(h11) | _private_names(starlette)
    protocol_names = _uvicorn_protocol_names()
    assert {"_unset_keepalive_if_required", "_get_upgrade"} <= private
    assert {"conn", "app", "logger", "transport", "loop", "cycle", "on_response_complete"} <= protocol_names
    touches = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in _package_files()
        if any(name in path.read_text(encoding="utf-8") for name in ("uvicorn", "h11", "starlette"))
        if (found := _touches(path, private, protocol_names))
    }
    assert touches == {}, f"uvicorn's internals outside serve/uvicorn_hooks.py: {touches}"
    assert _touches(DOOR, private, protocol_names)  # the door itself does
    assert issubclass(GuardedProtocol, EdgeProtocol)


def test_the_check_sees_each_kind_of_touch(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import uvicorn.server\nfrom uvicorn.protocols.http import h11_impl\nfrom uvicorn import Config, ServerState\n"
        "from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE\n"
        "from agent_host.serve.uvicorn_hooks import EdgeProtocol\n"
        "class A(EdgeProtocol):\n    def on_response_complete(self):\n        self.transport.close()\n"
        "    def own_h11(self, conn):\n        return conn\n"
        "class B(A):\n    def data_received(self, data):\n        x._unset_keepalive_if_required()\n",
        encoding="utf-8",
    )
    found = _touches(sample, _private_names(uvicorn), _uvicorn_protocol_names())
    assert len(found) == 7, found


def test_the_import_contract_names_every_module_of_the_installed_uvicorn() -> None:
    modules = {f"uvicorn.{module.name}" for module in pkgutil.iter_modules(uvicorn.__path__)}
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert "uvicorn" in config["root_packages"]
    [door] = [c for c in config["contracts"] if "uvicorn_hooks" in c["name"]]
    assert door["source_modules"] == ["agent_host"]
    assert modules <= set(door["forbidden_modules"]), modules - set(door["forbidden_modules"])
    assert all(rule.startswith("agent_host.serve.uvicorn_hooks -> ") for rule in door["ignore_imports"])
