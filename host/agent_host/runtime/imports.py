"""The WIT imports of world `agent` on each component's `Linker`, made from `operations.FUNCTIONS`.

Every host function is the same wrapper (`_host_function`): it converts a borrowed `tooling` handle
first (wasmtime traps a call that leaves a borrow unconsumed), calls `GuestSession.invoke` of the
guest running on its thread (`thread_state.session()`), and lowers the answer with `wit_values` by
its result type (`LOWER`). A `ToolingError` is the WIT `error` of a fallible function (tagged when
both cases are records: `TAGGED`) and the function's fallback otherwise; only host bugs trap (relayed
per thread by `host_function`). The resource destructor forgets the handle in the session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from wasmtime import StoreContext
from wasmtime.component import Linker, ResourceHost, ResourceType

from agent_host.errors import ToolingError
from agent_host.model import CallOutcome, Envelope, ResourceData, ResourceSpec, ToolSpec
from agent_host.operations import FUNCTIONS, INTERFACES, ToolingHandle, WitFunction, interface
from agent_host.runtime import wit_values
from agent_host.runtime.thread_state import host_function, session
from agent_host.runtime.wasmtime_hooks import add_func, borrowed_rep

TOOLING_TYPE: Final = 0xA6E7
"""Host-side type id of the `tooling` resource."""


def _same(value: Any) -> Any:
    return value


def _envelope(item: Envelope | None) -> Any:
    return None if item is None else wit_values.envelope(item)


LOWER: Final[Mapping[Any, Callable[[Any], Any]]] = {
    str: _same,
    bool: _same,
    None: _same,
    ToolingHandle: lambda rep: ResourceHost.own(rep, TOOLING_TYPE),
    list[ToolSpec]: lambda specs: [wit_values.tool(spec) for spec in specs],
    list[ResourceSpec]: lambda specs: [wit_values.resource_info(spec) for spec in specs],
    CallOutcome: wit_values.tool_result,
    ResourceData: wit_values.resource_content,
    Envelope | None: _envelope,
}
"""How a session's answer becomes a WIT value, by the function's result type."""

TAGGED: Final = frozenset({CallOutcome, ResourceData})
"""Result types whose `ok` and `err` are both records: their `result` is a tagged `Variant`."""


def define_imports(linker: Linker) -> None:
    """Define WASI and every import of world `agent` on `linker`."""
    linker.add_wasip2()
    with linker.root() as root:
        for name in INTERFACES:
            with root.add_instance(interface(name)) as instance:
                if name == "tooling":
                    instance.add_resource("tooling", ResourceType.host(TOOLING_TYPE), drop_tooling)
                for function in FUNCTIONS:
                    if function.interface == name:
                        add_func(instance, function.member, _host_function(function))


def _host_function(function: WitFunction) -> Callable[..., Any]:
    """The host function of `function` (see the module docstring)."""
    lower = LOWER[function.result]
    tagged = function.result in TAGGED
    method = function.resource is not None

    def call(store: StoreContext, *args: Any) -> Any:
        if method:
            args = (borrowed_rep(store, args[0]), *args[1:])
        current = session()
        try:
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


def _check_complete() -> None:
    """Every result type of the table has its lowering (a new type is added here, or fails at import)."""
    missing = [function.name for function in FUNCTIONS if function.result not in LOWER]
    if missing:
        raise RuntimeError(f"no WIT lowering for the result of {', '.join(missing)}")


_check_complete()
