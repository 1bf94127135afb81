"""`AgentHost`: what the `agent_host` fixture gives a test: run a guest, get a `RunResult`.

One `Host` at a time, created on the first `run` and shared by the runs of a test while their
`toolings` and `approve` stay equal (a mock's scripted results go on, connections stay open); other
values close it and open a new one. `close()` closes it (idempotent): no thread or process is left.
Each run grants the toolings passed (plus `allow`), reads its own lines of the audit log, and
collects its stderr: the guest's output lines and the host's log records during the run. A guest
that cannot be built or started is a result (status: the error's reference); a mistake in the
arguments (a bad tooling table, an `allow` matching nothing, no such guest) raises.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, Literal

from agent_host.app import devmode
from agent_host.app.host import Host
from agent_host.components.build import resolve_component
from agent_host.components.code_runners import agent_component
from agent_host.config import AgentConfig
from agent_host.errors import HostError, ReplayDiverged, UsageError
from agent_host.model import RunResult, RunStatus
from agent_host.policy.approval import ApproveAll, Approver, DenyAll
from agent_host.policy.grants import AgentPolicy
from agent_host.session import cassette as cassettes
from agent_host.testing.toolings import config_for

DEFAULT_TIMEOUT: Final = 60.0
"""Wall-clock seconds a guest's `run` may take under test (a hung guest fails the test, not the CI job)."""

Approve = Literal["deny", "all"] | Approver

Record = Literal["once", "none", "all"]
"""When `AgentHost.run(cassette=...)` records: the file is missing (`once`), never (`none`), always (`all`)."""


class AgentHost:
    """Runs guests for one test (see the module docstring)."""

    def __init__(self, base: Path, workdir: Path) -> None:
        """Relative guest paths and tooling paths are resolved against `base` (the folder pytest
        was started in); the audit log is written in `workdir`."""
        self.base = base
        self.audit_log = workdir / "audit.jsonl"
        self._host: Host | None = None
        self._key: tuple[dict[str, object], Approve, dict[str, object]] | None = None
        self._closed = False

    def run(
        self,
        guest: str | Path,
        *,
        input: str = "",
        toolings: Mapping[str, object] | None = None,
        allow: Iterable[str] | None = None,
        approve: Approve = "deny",
        dev: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        module: str | None = None,
        cassette: str | Path | None = None,
        record: Record = "once",
        providers: Mapping[str, Mapping[str, object]] | None = None,
    ) -> RunResult:
        """Run `guest` (a guest folder, or a `.wasm` run as is) with `input`; see `RunResult`.

        `toolings` maps names to MCP server objects or `[tooling.NAME]`-shaped dicts (see
        `agent_host.testing.toolings`); they are granted, and so is every tooling `allow` names (globs).
        `approve`: calls needing approval are denied ("deny"), approved ("all"), or decided by an
        `Approver`. `dev`: run the folder from its source with the dev runner (no build); False
        builds and runs the production component. `timeout`: wall-clock seconds for `run`.
        `module`: the module defining `WitWorld` (default: app.py).

        `cassette`: a cassette file (relative paths start where pytest was started) that the run is
        recorded into or replayed from, as `agent-host run --record/--replay` do (its tape is the
        guest's, keyed by its name; other agents' tapes in the file are kept). `record`: "once"
        records when the file is missing and replays otherwise; "none" only replays (a missing file
        raises `CassetteError`); "all" always records. A replay answers every tooling function from
        the file, with no server; a guest that asks for anything else, or is given another input,
        ends with status "diverged" (exit code 4).

        `providers` maps names to `[provider.NAME]`-shaped dicts (a mock's `{"kind": "mock", "turns":
        [...]}`, or a network kind's table); every one is granted to the guest, whole, and the
        result's `usage` is what its chats used.

        Raises `ConfigError` for a bad tooling or provider table, `UsageError` for an `allow` matching no
        tooling or a missing guest, `TypeError` for a tooling value of another type, `CassetteError`
        for a cassette that cannot be read or written.
        """
        if self._closed:
            raise RuntimeError("agent_host used after the test ended")
        path = guest if isinstance(guest, Path) else Path(guest)
        path = path if path.is_absolute() else self.base / path
        if not path.exists():
            raise UsageError(f"{guest}: no such guest folder or .wasm (relative paths start in {self.base})")
        name = path.stem if path.suffix == ".wasm" else path.name
        settings = AgentConfig(timeout=timeout, providers=tuple(providers or ())).named(
            name, "agent_host.run(timeout=..., providers=...)"
        )

        def component(host: Host, policy: AgentPolicy) -> tuple[Path, AgentPolicy]:
            if dev and path.is_dir():
                return devmode.dev_component(path, module), devmode.dev_policy(policy, path, module)
            return resolve_component(path, module=module), policy

        return self._run(name, settings, component, input, toolings, allow, approve, cassette, record, providers)

    def run_code(
        self,
        code: str,
        *,
        toolings: Mapping[str, object] | None = None,
        allow: Iterable[str] | None = None,
        approve: Approve = "deny",
        timeout: float = DEFAULT_TIMEOUT,
        name: str = "code",
        language: Literal["python", "javascript"] = "python",
        cassette: str | Path | None = None,
        record: Record = "once",
        providers: Mapping[str, Mapping[str, object]] | None = None,
    ) -> RunResult:
        """Run `code` (in `language`) as a code agent named `name` (`[agents.NAME] code = LANGUAGE`;
        docs: code mode): a fresh sandbox with the toolings passed (and `allow`) as `toolings`. Its
        `text` is the answer's JSON (`{"result", "stdout"}`), or the traceback when it failed. The
        other arguments are `run`'s."""
        if self._closed:
            raise RuntimeError("agent_host used after the test ended")
        settings = AgentConfig(code=language, timeout=timeout, providers=tuple(providers or ())).named(
            name, "agent_host.run_code(timeout=..., providers=...)"
        )

        def component(host: Host, policy: AgentPolicy) -> tuple[Path, AgentPolicy]:
            return agent_component(settings), policy

        return self._run(name, settings, component, code, toolings, allow, approve, cassette, record, providers)

    def _run(
        self,
        name: str,
        settings: AgentConfig,
        component: Callable[[Host, AgentPolicy], tuple[Path, AgentPolicy]],
        input: str,
        toolings: Mapping[str, object] | None,
        allow: Iterable[str] | None,
        approve: Approve,
        cassette: str | Path | None,
        record: Record,
        providers: Mapping[str, Mapping[str, object]] | None,
    ) -> RunResult:
        host = self._host_for(dict(toolings or {}), approve, {k: dict(v) for k, v in (providers or {}).items()})
        policy = host.policy(name, settings, [*(toolings or {}), *(allow or ())])
        sink = _Sink()
        start = len(self.audit_log.read_bytes()) if self.audit_log.exists() else 0
        tape_file = None if cassette is None else self._path(cassette)
        host.tapes = None if tape_file is None else _tapes(tape_file, record, host.config.secrets)
        if isinstance(host.tapes, cassettes.Playback):
            host.tapes.player(name)  # raises CassetteError when the file has no tape of this guest
        with _host_messages(sink):
            try:
                wasm, policy = component(host, policy)
                diverged = _other_input(host.tapes, name, input)
                outcome = diverged or host.run(wasm, input, agent=name, policy=policy, output=sink)
            except HostError as exc:
                outcome = RunResult.not_started(name, exc)
                sink.write(f"agent-host: error: {exc}\n")
            finally:
                tapes, host.tapes = host.tapes, None
        if isinstance(tapes, cassettes.Recording) and tape_file is not None:
            cassettes.save(tapes.cassette, tape_file)  # other guests' tapes in the file are kept
        return _result(outcome, sink.getvalue(), self._audit_since(start))

    def input_schema(self, guest: str | Path, *, module: str | None = None) -> dict[str, Any] | None:
        """The JSON Schema `agent-host serve` offers as the arguments of `guest`'s tool when its
        table gives no `input_schema`: the one its component says (a typed `@agent` function, built
        as production builds it), or None (the tool then takes `{"input": string}`)."""
        if self._closed:
            raise RuntimeError("agent_host used after the test ended")
        path = self._path(guest)
        if not path.exists():
            raise UsageError(f"{guest}: no such guest folder or .wasm (relative paths start in {self.base})")
        host = self._host_for({}, "deny", {})
        name = path.stem if path.suffix == ".wasm" else path.name
        return host.input_schema(resolve_component(path, module=module), name, host.policy(name))

    def _path(self, given: str | Path) -> Path:
        path = given if isinstance(given, Path) else Path(given)
        return path if path.is_absolute() else self.base / path

    def _host_for(self, toolings: dict[str, object], approve: Approve, providers: dict[str, object]) -> Host:
        """The host for these arguments: the current one while they are unchanged, else a new one."""
        key = (toolings, approve, providers)
        if self._host is not None and self._key == key:
            return self._host
        self._close_host()
        config = config_for(toolings, audit_log=self.audit_log, base=self.base, providers=providers)
        self._host = Host(config, approver=_approver(approve))
        self._key = key
        return self._host

    def _audit_since(self, offset: int) -> list[dict[str, Any]]:
        if not self.audit_log.exists():
            return []
        with self.audit_log.open("rb") as log:
            log.seek(offset)
            return [json.loads(line) for line in log.read().decode("utf-8").splitlines() if line.strip()]

    def _close_host(self) -> None:
        host, self._host, self._key = self._host, None, None
        if host is not None:
            host.close()

    def close(self) -> None:
        """Close the host (its connections and threads); idempotent."""
        self._closed = True
        self._close_host()

    def __enter__(self) -> AgentHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tapes(path: Path, record: Record, secrets: frozenset[str]) -> cassettes.Tapes:
    """What a run with `cassette=path, record=record` records into or replays from."""
    if record not in ("once", "none", "all"):
        raise UsageError(f"record={record!r}: use 'once', 'none' or 'all'")
    if record == "all" or (record == "once" and not path.exists()):
        cassettes.check_target(path)
        return cassettes.Recording(secrets)
    return cassettes.Playback(cassettes.load(path), path, secrets)


def _other_input(tapes: cassettes.Tapes | None, agent: str, given: str) -> RunResult | None:
    """A replay given another input than the recorded one has diverged before it starts."""
    if not isinstance(tapes, cassettes.Playback):
        return None
    try:
        tapes.check_input(agent, given)
    except ReplayDiverged as exc:
        return RunResult(agent, RunStatus.DIVERGED, exc.message, 0.0)
    return None


def _approver(approve: Approve) -> Approver:
    if approve == "deny":
        return DenyAll()
    if approve == "all":
        return ApproveAll()
    if isinstance(approve, str):
        raise UsageError(f"approve={approve!r}: use 'deny', 'all' or an Approver")
    return approve


def _result(outcome: RunResult, stderr: str, audit: list[dict[str, Any]]) -> RunResult:
    return dataclasses.replace(outcome, stderr=stderr, audit=audit)


class _Sink(io.StringIO):
    """Collects one run's stderr, and passes it on to `sys.stderr` (pytest shows it for a failed test)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            sys.stderr.write(text)
            return super().write(text)


class _Handler(logging.Handler):
    """The host's log records as `agent-host run` shows them: `agent-host: [level: ]message`; a
    guest's log lines as they came."""

    def __init__(self, sink: _Sink) -> None:
        super().__init__(logging.INFO)
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        level = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
        line = f"{level}{message}" if record.name == "agent_host.guest" else f"agent-host: {level}{message}"
        self._sink.write(line + "\n")


@contextmanager
def _host_messages(sink: _Sink) -> Iterator[None]:
    """Copy the host's log records of INFO and above to `sink` while the block runs."""
    logger = logging.getLogger("agent_host")
    handler = _Handler(sink)
    level = logger.level
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
