"""The WIT imports of world `agent` on each component's `Linker`, made from `operations.FUNCTIONS`.

Every host function is the same wrapper (`_host_function`): it converts a borrowed handle first
(wasmtime traps a call that leaves a borrow unconsumed) and the record parameters (`LIFT`), calls
`GuestSession.invoke` of the guest running on its thread (`thread_state.session()`), and lowers the
answer with `wit_values` by its result type (`LOWER`). Every package version of `VERSIONS` is
defined, each with the functions its guests import (`operations.linked`). A `ToolingError` is the
WIT `error` of a fallible function (tagged when both cases are records: `TAGGED`) and the
function's fallback otherwise; only host bugs trap (relayed per thread by `host_function`). The
resource destructors forget the handle in the session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from wasmtime import StoreContext
from wasmtime.component import Linker, ResourceHost, ResourceType

from agent_host.errors import ToolingError
from agent_host.model import CallOutcome, ChatRequest, ChatResult, Envelope, ResourceData, ResourceSpec, ToolSpec
from agent_host.operations import (
    FUNCTIONS,
    VERSIONS,
    ProviderHandle,
    ToolingHandle,
    WitFunction,
    interface,
    linked,
)
from agent_host.runtime import wit_values
from agent_host.runtime.thread_state import host_function, session
from agent_host.runtime.wasmtime_hooks import add_func, borrowed_rep

TOOLING_TYPE: Final = 0xA6E7
"""Host-side type id of the `tooling` resource."""

PROVIDER_TYPE: Final = 0xA6E8
"""Host-side type id of the `provider` resource."""


def _same(value: Any) -> Any:
    return value


def _envelope(item: Envelope | None) -> Any:
    return None if item is None else wit_values.envelope(item)


LOWER: Final[Mapping[Any, Callable[[Any], Any]]] = {
    str: _same,
    bool: _same,
    None: _same,
    ToolingHandle: lambda rep: ResourceHost.own(rep, TOOLING_TYPE),
    ProviderHandle: lambda rep: ResourceHost.own(rep, PROVIDER_TYPE),
    list[str]: _same,
    ChatResult: wit_values.chat_result,
    list[ToolSpec]: lambda specs: [wit_values.tool(spec) for spec in specs],
    list[ResourceSpec]: lambda specs: [wit_values.resource_info(spec) for spec in specs],
    CallOutcome: wit_values.tool_result,
    ResourceData: wit_values.resource_content,
    Envelope | None: _envelope,
}
"""How a session's answer becomes a WIT value, by the function's result type."""

TAGGED: Final = frozenset({CallOutcome, ResourceData, ChatResult})
"""Result types whose `ok` and `err` are both records: their `result` is a tagged `Variant`."""

LIFT: Final[Mapping[Any, Callable[[Any], Any]]] = {ChatRequest: wit_values.chat_request}
"""How a parameter a guest passed becomes host data, by its type (others are passed as they are)."""


def define_imports(linker: Linker) -> None:
    """Define WASI and every import of world `agent`, in each package version, on `linker`."""
    linker.add_wasip2()
    resources = {"tooling": (TOOLING_TYPE, drop_tooling), "provider": (PROVIDER_TYPE, drop_provider)}
    with linker.root() as root:
        for version in VERSIONS:
            functions = linked(version)
            for name in dict.fromkeys(function.interface for function in functions):
                with root.add_instance(interface(name, version)) as instance:
                    if name in resources:
                        type_id, destructor = resources[name]
                        instance.add_resource(name, ResourceType.host(type_id), destructor)
                    for function in functions:
                        if function.interface == name:
                            add_func(instance, function.member, _host_function(function))


def _host_function(function: WitFunction) -> Callable[..., Any]:
    """The host function of `function` (see the module docstring)."""
    lower = LOWER[function.result]
    tagged = function.result in TAGGED
    method = function.resource is not None
    lifts = [LIFT.get(kind) for _, kind in function.params]
    lifted = any(lift is not None for lift in lifts)

    def call(store: StoreContext, *args: Any) -> Any:
        if method:
            args = (borrowed_rep(store, args[0]), *args[1:])
        current = session()
        try:
            if lifted:
                first = 1 if method else 0
                args = (*args[:first], *(a if f is None else f(a) for a, f in zip(args[first:], lifts, strict=True)))
            value = current.invoke(function, args)
        except ToolingError as exc:
            if not function.fallible:
                return function.fallback
            current.last_error = exc
            return wit_values.err(exc) if tagged else wit_values.error(exc)
        return wit_values.ok(lower(value)) if tagged else lower(value)

    call.__name__ = call.__qualname__ = function.session  # what a trap's message names
    return host_function(call)


@host_function
def drop_tooling(store: StoreContext, rep: int) -> None:
    del store
    try:
        current = session()
    except RuntimeError:
        return  # dropped after its guest ended: the session already forgot it
    current.drop(rep)


@host_function
def drop_provider(store: StoreContext, rep: int) -> None:
    del store
    try:
        current = session()
    except RuntimeError:
        return
    current.drop_provider(rep)


def _check_complete() -> None:
    """Every result type of the table has its lowering (a new type is added here, or fails at import)."""
    missing = [function.key for function in FUNCTIONS if function.result not in LOWER]
    if missing:
        raise RuntimeError(f"no WIT lowering for the result of {', '.join(missing)}")


_check_complete()
