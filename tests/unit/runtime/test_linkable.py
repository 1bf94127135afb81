"""Which imports the host provides (`runtime.linkable`): every name resolved as wasmtime's linker
resolves it (exact name, else semver track, build metadata ignored) against one table, and the
refusal that names what is not provided."""

from __future__ import annotations

import pytest

from agent_host.runtime import linkable
from agent_host.runtime.linkable import Serves, Waits

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


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # wasmtime-environ's own cases (component/names.rs, `alternate_lookup_key`)
        ("x", None),
        ("x:y/z", None),
        ("x:y/z@1.0.0", ("x:y/z", "1")),
        ("x:y/z@1.1.2", ("x:y/z", "1")),
        ("x:y/z@2.1.2", ("x:y/z", "2")),
        ("x:y/z@2.1.2+abc", ("x:y/z", "2")),
        ("x:y/z@0.1.2", ("x:y/z", "0.1")),
        ("x:y/z@0.2.3+abc", ("x:y/z", "0.2")),
        ("x:y/z@0.0.1", None),
        ("x:y/z@0.0.1-pre", None),
        ("x:y/z@0.1.0-pre", None),
        ("x:y/z@1.0.0-pre", None),
        # what the `semver` crate refuses: leading zeros, a `v`, missing parts, u64 overflow, empty metadata
        ("x:y/z@0.02.0", None),
        ("x:y/z@v0.2.0", None),
        ("x:y/z@0.2", None),
        ("x:y/z@0.2.18446744073709551616", None),
        ("x:y/z@0.2.0+", None),
        ("x:y/z@0.2.0+a..b", None),
        ("x:y/z@ 0.2.0", None),
        # what it accepts: leading zeros in build metadata, the largest u64, the first `@` only
        ("x:y/z@0.2.0+0001.x-y", ("x:y/z", "0.2")),
        ("x:y/z@0.2.18446744073709551615", ("x:y/z", "0.2")),
        ("x:y/z@0.2.0@1.0.0", None),
    ],
)
def test_an_import_takes_the_track_wasmtimes_linker_looks_up(name: str, expected: tuple[str, str] | None) -> None:
    assert linkable.track(name) == expected


def test_everything_that_can_wait_for_time_or_the_host_is_the_hosts_own() -> None:
    bounded = {key for key, provided in linkable.PROVIDED.items() if provided.waits is Waits.BOUNDED}
    assert (linkable.CLOCK, linkable.WASI_TRACK) in bounded
    assert all(linkable.PROVIDED[key].serves is Serves.HOST for key in bounded)


@pytest.mark.parametrize(
    "spelling", ["@0.2.0", "@0.2.0+x", "@0.2.12", "@0.2.999", "@0.2.1+build.7", "@0.2.0-rc.1", "@0.3.0", ""]
)
def test_the_clock_is_the_hosts_under_every_name_that_could_reach_wasis(spelling: str) -> None:
    name = f"{linkable.CLOCK}{spelling}"
    found = linkable.imports_of([*BUILT, name, "wasi:clocks/monotonic-clocks@0.2.0"], linkable.CLOCK)
    assert found == ["wasi:clocks/monotonic-clock@0.2.12", *([name] if spelling else [])]


def test_wasi_02_and_the_guest_interfaces_are_provided_however_spelt() -> None:
    spelt = ["wasi:io/poll@0.2.0+x", "agent-host:guest/log@0.2.7+y", "wasi:sockets/udp@0.2.99"]
    assert linkable.unlinkable([*BUILT, *spelt]) == []
    assert linkable.problem(BUILT) is None


def test_wasi_http_is_named_with_the_flag_that_avoids_it() -> None:
    found = linkable.problem([*BUILT, "wasi:http/types@0.2.10", "wasi:http/outgoing-handler@0.2.10"])
    assert found is not None
    message, hint = found
    imports = "wasi:http/types@0.2.10, wasi:http/outgoing-handler@0.2.10"
    assert message == f"imports {imports}, which agent-host does not provide"
    assert "--disable http fetch-event" in hint


def test_other_packages_tracks_and_interfaces_are_not_provided() -> None:
    names = [
        "wasi:io/poll@0.3.0",
        "wasi:io/poll@0.2.0-rc-2023-11-10",
        "acme:kv/store@1.0.0",
        "wasi:keyvalue/store",
        "wasi:clocks/timezone@0.2.0",
        "agent-host:guest/tooling@0.1.0",
        "agent-host:guest/secrets@0.2.0",
        "wasi:io/poll",
    ]
    assert linkable.unlinkable(names) == names
    found = linkable.problem(["acme:kv/store@1.0.0"])
    assert found is not None and found[1] == linkable.DEFAULT_HINT


def test_a_refusal_names_a_few_imports_each_cut_to_a_bounded_length() -> None:
    names = [f"acme:pkg{index}/iface@1.0.0" for index in range(100)] + ["x" * 1_000_000]
    found = linkable.problem(names)
    assert found is not None
    message = found[0]
    assert len(message) < 2_000
    assert "acme:pkg0/iface@1.0.0" in message and f"and {101 - linkable.MAX_NAMED} more" in message
    long = linkable.problem(["y" * 1_000_000])
    assert long is not None and "(1000000 characters)" in long[0] and len(long[0]) < 300
