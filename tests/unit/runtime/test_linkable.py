"""Which imports the host links (`runtime.linkable`), by name, as wasmtime lists a component's.

Provenance: issue 23, point 4 (a component importing `wasi:http` is named with the flag that avoids
it, instead of wasmtime's "resource implementation is missing").
"""

from __future__ import annotations

from agent_host.runtime import linkable

BUILT: list[str] = [
    "agent-host:guest/types@0.2.0",
    "agent-host:guest/tooling@0.2.0",
    "wasi:io/poll@0.2.12",
    "wasi:cli/stdout@0.2.12",
    "wasi:clocks/monotonic-clock@0.2.12",
    "wasi:filesystem/preopens@0.2.0",
    "wasi:random/random@0.2.12",
    "wasi:sockets/tcp@0.2.0",
]


def test_wasi_02_and_the_guest_interfaces_are_linked() -> None:
    assert linkable.unlinkable(BUILT) == []
    assert linkable.problem(BUILT) is None


def test_wasi_http_is_named_with_the_flag_that_avoids_it() -> None:
    found = linkable.problem([*BUILT, "wasi:http/types@0.2.10", "wasi:http/outgoing-handler@0.2.10"])
    assert found is not None
    message, hint = found
    imports = "wasi:http/types@0.2.10, wasi:http/outgoing-handler@0.2.10"
    assert message == f"imports {imports}, which agent-host does not provide"
    assert "--disable http fetch-event" in hint


def test_other_packages_and_wasi_03_are_not_linked() -> None:
    assert linkable.unlinkable(["wasi:io/poll@0.3.0", "acme:kv/store@1.0.0", "wasi:keyvalue/store"]) == [
        "wasi:io/poll@0.3.0",
        "acme:kv/store@1.0.0",
        "wasi:keyvalue/store",
    ]
    found = linkable.problem(["acme:kv/store@1.0.0"])
    assert found is not None and found[1] == linkable.DEFAULT_HINT
