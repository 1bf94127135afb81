"""Why a guest trapped, as the host tells it, from what the guest left on its stderr.

Provenance: issue 8, points 1 and 2: a guest not built by `agent-host build` (no entry wrapper)
still gets the memory limit named from CPython's out-of-memory dump, and an uncaught host error is
named by the last error the host returned to it.
"""

from __future__ import annotations

from pathlib import Path

from host.config import parse_config
from host.errors import ErrorCode, ToolingError
from host.policy import AgentPolicy
from host.runtime.trap_reasons import trap_reason

UNREACHABLE = (
    "error while executing at wasm backtrace:\n    0: 0x1 - <unknown>!abort\n\n"
    "Caused by:\n    wasm trap: wasm `unreachable` instruction executed"
)

CPYTHON_DUMP = """Traceback (most recent call last):
  File "/0/app.py", line 8, in run
object address  : 0x481c88
object refcount : 2
object type     : 0x373230
object type name: MemoryError
object repr     : MemoryError()
lost sys.stderr
"""


def policy(tmp_path: Path) -> AgentPolicy:
    config = parse_config('[agents.hog]\ncomponent = "x.wasm"\nmemory = "64MiB"\n', tmp_path / "agent-host.toml")
    return AgentPolicy.resolve(config, "hog", config.agents["hog"])


def test_cpythons_out_of_memory_dump_is_read_as_the_memory_limit(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text(CPYTHON_DUMP)
    reason = trap_reason(UNREACHABLE, err, None, policy(tmp_path))
    assert reason == (
        f"memory limit: the guest ran out of memory at 64 MiB; the limit is memory in {tmp_path}/agent-host.toml "
        "[agents.hog]"
    )


def test_a_wrapped_guests_memory_error_keeps_its_place(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text(
        "Traceback (most recent call last):\n"
        '  File "/1/agentlib/entry.py", line 47, in run\n'
        "MemoryError: raised at app.py:8\n"
    )
    assert "out of memory at 64 MiB (raised at app.py:8); the limit is memory in" in trap_reason(
        UNREACHABLE, err, None, policy(tmp_path)
    )


def test_another_exception_is_named_with_the_trap(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text('Traceback (most recent call last):\n  File "/0/app.py", line 3, in run\nRuntimeError: kaput\n')
    assert trap_reason(UNREACHABLE, err, None, policy(tmp_path)) == (
        "the guest raised RuntimeError: kaput at /0/app.py:3"
    )


def test_a_trap_without_a_traceback_names_the_last_error_the_host_returned(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text("thread '<unnamed>' (1) panicked at runtime/src/lib.rs:1494:89:\n")
    last = ToolingError(ErrorCode.NOT_FOUND, "no tooling named 'nosuch' is configured")
    reason = trap_reason(UNREACHABLE, err, last, policy(tmp_path))
    assert "the last error the host returned to the guest was not-found: no tooling named 'nosuch'" in reason
    assert trap_reason(UNREACHABLE, err, None, policy(tmp_path)) == "wasm trap: wasm `unreachable` instruction executed"


def test_without_a_config_file_the_memory_limit_names_where_to_set_it(tmp_path: Path) -> None:
    """Provenance: issue 20, point 19: with no config file the message named `[host] memory`, a
    table of a file that does not exist."""
    from host.config import default_config

    err = tmp_path / "stderr"
    err.write_text(CPYTHON_DUMP)
    reason = trap_reason(UNREACHABLE, err, None, AgentPolicy.resolve(default_config(), "guest"))
    assert reason == (
        "memory limit: the guest ran out of memory at 256 MiB; the limit is the default `memory`; no config "
        "file is in use: set it in [host] of agent-host.toml, which `agent-host config init` writes"
    )
