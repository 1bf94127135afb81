"""Why a guest trapped, as the host tells it: host state decides, the guest's stderr is quoted.

An uncaught host error is named by the last error the host returned to the guest; the memory limit
names where it is set. A `MemoryError` on the guest's stderr (even CPython's own out-of-memory dump) is
only the guest's words: without a growth the host refused, it is not the memory limit.
"""

from __future__ import annotations

from pathlib import Path

from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.policy.grants import AgentPolicy
from agent_host.runtime.trap_reasons import memory_limit_reason, trap_reason

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


def test_a_memory_error_on_the_guests_stderr_is_only_its_words(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text(CPYTHON_DUMP)
    assert trap_reason(UNREACHABLE, err, None) == "the guest raised MemoryError"
    err.write_text(
        'Traceback (most recent call last):\n  File "app.py", line 1, in run\nMemoryError: raised at app.py:1\n'
    )
    assert trap_reason(UNREACHABLE, err, None) == "the guest raised MemoryError: raised at app.py:1 at app.py:1"


def test_the_memory_limit_report_names_the_limit_and_where_it_is_set(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text(CPYTHON_DUMP)
    assert memory_limit_reason(policy(tmp_path), err) == (
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
    assert "out of memory at 64 MiB (raised at app.py:8); the limit is memory in" in memory_limit_reason(
        policy(tmp_path), err
    )


def test_another_exception_is_named_with_the_trap(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text('Traceback (most recent call last):\n  File "/0/app.py", line 3, in run\nRuntimeError: kaput\n')
    assert trap_reason(UNREACHABLE, err, None) == "the guest raised RuntimeError: kaput at /0/app.py:3"


def test_a_trap_without_a_traceback_names_the_last_error_the_host_returned(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text("thread '<unnamed>' (1) panicked at runtime/src/lib.rs:1494:89:\n")
    last = ToolingError(ErrorCode.NOT_FOUND, "no tooling named 'nosuch' is configured")
    reason = trap_reason(UNREACHABLE, err, last)
    assert "the last error the host returned to the guest was not-found: no tooling named 'nosuch'" in reason
    assert trap_reason(UNREACHABLE, err, None) == "wasm trap: wasm `unreachable` instruction executed"


def test_without_a_config_file_the_memory_limit_names_where_to_set_it(tmp_path: Path) -> None:
    """With no config file the message must not name only `[host] memory`, a table of a file that
    does not exist."""
    from agent_host.config import default_config

    reason = memory_limit_reason(AgentPolicy.resolve(default_config(), "guest"))
    assert reason == (
        "memory limit: the guest ran out of memory at 256 MiB; the limit is the default `memory`; no config "
        "file is in use: set it in [host] of agent-host.toml, which `agent-host config init` writes"
    )


def test_the_memory_limit_report_adds_the_trap_when_the_guest_names_no_memory_error(tmp_path: Path) -> None:
    err = tmp_path / "stderr"
    err.write_text("")
    overflow = "error while executing\n\nCaused by:\n    wasm trap: call stack exhausted"
    assert memory_limit_reason(policy(tmp_path), err, overflow).endswith(
        f"the limit is memory in {tmp_path}/agent-host.toml [agents.hog]; then: wasm trap: call stack exhausted"
    )
    err.write_text(CPYTHON_DUMP)
    assert memory_limit_reason(policy(tmp_path), err, overflow).endswith("[agents.hog]")
