"""The WIT imports of world `agent`, defined on each component's `Linker` through `wasmtime_hooks.add_func`.

Each host function finds the guest running on its thread (`thread_state.session()`), calls the
matching `GuestSession` method, and converts the outcome with `wit_values`. Expected failures are
returned as WIT `error` values; only host bugs trap (relayed per thread by `host_function`).

Borrowed `tooling` handles are converted with `to_host` first thing in every method (wasmtime traps
a call that leaves a borrow unconsumed). The resource destructor forgets the handle in the session;
handles still alive when a guest ends are forgotten by `GuestSession.close`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from wasmtime import StoreContext
from wasmtime.component import Linker, LinkerInstance, Record, ResourceAny, ResourceHost, ResourceType, Variant

from agent_host.errors import ToolingError
from agent_host.model import Envelope
from agent_host.runtime import wit_values
from agent_host.runtime.thread_state import host_function, session
from agent_host.runtime.wasmtime_hooks import add_func, borrowed_rep
from agent_host.session import SubscriptionKind

PACKAGE: Final = "agent-host:guest"
VERSION: Final = "0.2.0"
TOOLING_TYPE: Final = 0xA6E7
"""Host-side type id of the `tooling` resource."""

_T = TypeVar("_T")


def interface(name: str) -> str:
    return f"{PACKAGE}/{name}@{VERSION}"


def define_imports(linker: Linker) -> None:
    """Define WASI and every import of world `agent` on `linker`."""
    linker.add_wasip2()
    with linker.root() as root:
        with root.add_instance(interface("tooling")) as li:
            _define_tooling(li)
        with root.add_instance(interface("inbox")) as li:
            add_func(li, "recv", recv)
            add_func(li, "try-recv", try_recv)
        with root.add_instance(interface("log")) as li:
            add_func(li, "log", log)


def _rep(store: StoreContext, handle: ResourceAny) -> int:
    return borrowed_rep(store, handle)


def _bare(produce: Callable[[], _T], convert: Callable[[_T], Any]) -> Any:
    """For results whose ok and err cases have distinct Python types."""
    try:
        return convert(produce())
    except ToolingError as exc:
        session().last_error = exc
        return wit_values.error(exc)


def _tagged(produce: Callable[[], _T], convert: Callable[[_T], Record]) -> Variant:
    """For results whose ok and err cases are both records."""
    try:
        return wit_values.ok(convert(produce()))
    except ToolingError as exc:
        session().last_error = exc
        return wit_values.err(exc)


def _same(value: _T) -> _T:
    return value


def _define_tooling(li: LinkerInstance) -> None:
    li.add_resource("tooling", ResourceType.host(TOOLING_TYPE), drop_tooling)
    add_func(li, "get", get)
    methods: dict[str, Callable[..., Any]] = {
        "kind": kind,
        "name": name,
        "list-tools": list_tools,
        "call-tool": call_tool,
        "is-open": is_open,
        "cancel": cancel,
        "call-tool-blocking": call_tool_blocking,
        "list-resources": list_resources,
        "read-resource": read_resource,
        "subscribe-resource-list": subscribe_resource_list,
        "unsubscribe-resource-list": unsubscribe_resource_list,
        "subscribe-resource": subscribe_resource,
        "unsubscribe-resource": unsubscribe_resource,
        "subscribe-tool-list": subscribe_tool_list,
        "unsubscribe-tool-list": unsubscribe_tool_list,
        "respond": respond,
    }
    for method, fn in methods.items():
        add_func(li, f"[method]tooling.{method}", fn)


@host_function
def respond(store: StoreContext, handle: ResourceAny, call_id: str, action: str, content: str | None) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().respond(rep, call_id, action, content), _same)


@host_function
def drop_tooling(store: StoreContext, rep: int) -> None:
    del store
    try:
        current = session()
    except RuntimeError:
        return  # dropped after its guest ended: the session already forgot it
    current.drop(rep)


@host_function
def get(store: StoreContext, name: str) -> Any:
    return _bare(lambda: session().get(name), lambda rep: ResourceHost.own(rep, TOOLING_TYPE))


@host_function
def kind(store: StoreContext, handle: ResourceAny) -> str:
    rep = _rep(store, handle)
    try:
        return session().kind(rep)
    except ToolingError:
        return ""


@host_function
def name(store: StoreContext, handle: ResourceAny) -> str:
    rep = _rep(store, handle)
    try:
        return session().name(rep)
    except ToolingError:
        return ""


@host_function
def list_tools(store: StoreContext, handle: ResourceAny) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().list_tools(rep), lambda specs: [wit_values.tool(s) for s in specs])


@host_function
def call_tool(store: StoreContext, handle: ResourceAny, tool: str, arguments: str) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().call_tool(rep, tool, arguments), _same)


@host_function
def is_open(store: StoreContext, handle: ResourceAny, call_id: str) -> bool:
    rep = _rep(store, handle)
    try:
        return session().is_open(rep, call_id)
    except ToolingError:
        return False


@host_function
def cancel(store: StoreContext, handle: ResourceAny, call_id: str) -> bool:
    rep = _rep(store, handle)
    try:
        return session().cancel(rep, call_id)
    except ToolingError:
        return False


@host_function
def call_tool_blocking(store: StoreContext, handle: ResourceAny, tool: str, arguments: str) -> Variant:
    rep = _rep(store, handle)
    return _tagged(lambda: session().call_tool_blocking(rep, tool, arguments), wit_values.tool_result)


@host_function
def list_resources(store: StoreContext, handle: ResourceAny) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().list_resources(rep), lambda specs: [wit_values.resource_info(s) for s in specs])


@host_function
def read_resource(store: StoreContext, handle: ResourceAny, uri: str) -> Variant:
    rep = _rep(store, handle)
    return _tagged(lambda: session().read_resource(rep, uri), wit_values.resource_content)


@host_function
def subscribe_resource_list(store: StoreContext, handle: ResourceAny) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().subscribe(rep, "resource-list"), _same)


@host_function
def subscribe_resource(store: StoreContext, handle: ResourceAny, uri: str) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().subscribe(rep, "resource", uri), _same)


@host_function
def subscribe_tool_list(store: StoreContext, handle: ResourceAny) -> Any:
    rep = _rep(store, handle)
    return _bare(lambda: session().subscribe(rep, "tool-list"), _same)


def _unsubscribe(store: StoreContext, handle: ResourceAny, kind: SubscriptionKind, sub_id: str) -> bool:
    rep = _rep(store, handle)
    try:
        return session().unsubscribe(rep, kind, sub_id)
    except ToolingError:
        return False


@host_function
def unsubscribe_resource_list(store: StoreContext, handle: ResourceAny, sub_id: str) -> bool:
    return _unsubscribe(store, handle, "resource-list", sub_id)


@host_function
def unsubscribe_resource(store: StoreContext, handle: ResourceAny, sub_id: str) -> bool:
    return _unsubscribe(store, handle, "resource", sub_id)


@host_function
def unsubscribe_tool_list(store: StoreContext, handle: ResourceAny, sub_id: str) -> bool:
    return _unsubscribe(store, handle, "tool-list", sub_id)


def _envelope(item: Envelope | None) -> Record | None:
    return None if item is None else wit_values.envelope(item)


@host_function
def recv(store: StoreContext, timeout_ms: int | None) -> Record | None:
    return _envelope(session().recv(timeout_ms))


@host_function
def try_recv(store: StoreContext) -> Record | None:
    return _envelope(session().try_recv())


@host_function
def log(store: StoreContext, level: str, message: str) -> None:
    session().log(level, message)
