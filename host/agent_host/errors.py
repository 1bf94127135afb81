"""Every error the host raises, drawn here as one tree, and the exit codes they map to.

    AgentHostError
    ├── ToolingError   what a guest sees: an ErrorCode (the WIT error-code), a message, JSON data
    └── HostError      for the person running the host: a kebab-case reference, a hint, an exit code
        ├── ConfigError, UsageError (└── CassetteError), BuildError, ComponentError, Interrupted
        └── GuestsStuck, UnsafeCacheError, SdkMismatch, UvicornMismatch, ReplayDiverged, WorkerFailure

Toolings raise `ToolingError`; `runtime.wit_values` alone turns it into a WIT value. A `HostError`'s
`reference` is the status of a run it kept from starting (`model.RunStatus`). `ExitCode` is the one
table of the command's exit codes. This module imports nothing else of the package.
"""

from __future__ import annotations

import enum
import signal
from typing import ClassVar


class ExitCode(enum.IntEnum):
    """Exit codes of the `agent-host` command: 0 success; 1 the guest's `run` (or a `call`ed tool)
    returned an error; 2 usage, configuration or build error; 3 the guest trapped or hit a limit;
    4 a replayed run diverged from its cassette; 128 + N stopped by signal N, as shells report it
    (130 SIGINT, 143 SIGTERM)."""

    SUCCESS = 0
    GUEST_ERROR = 1
    USAGE_ERROR = 2
    TRAP = 3
    DIVERGED = 4
    """A replayed run asked for something its cassette does not have next (`run --replay`)."""
    INTERRUPTED = 130
    """SIGINT (Ctrl-C), and any stop request that came with no signal."""

    @staticmethod
    def for_signal(signum: int | None) -> int:
        """The exit code of a command stopped by signal `signum` (SIGINT when None)."""
        return 128 + (signum if signum is not None else signal.SIGINT)


def missing_module_hints(detail: str, folder: str | None = None) -> tuple[str, ...]:
    """What to do about a module a guest cannot import (`detail`: Python's message, such as
    `No module named 'requests.adapters'`), the fix for this case first: the same hints for a build,
    a run and a dev run. `folder`: the guest folder, when known."""
    named = detail.partition("No module named ")[2].strip().strip("'\"").partition(".")[0]
    package = named or "PACKAGE"
    return (
        f"copy it into the guest folder: pip install --no-deps --target {folder or 'GUEST_FOLDER'} {package}"
        + (f" (the package that provides module {named})" if named else ""),
        "a guest imports the standard library, agentlib and what its folder holds, never the host's packages; "
        "copy the package's pure-Python dependencies likewise (a native extension cannot run in a guest)",
        "a built guest holds only the standard-library modules its code imports as it loads: import one used later "
        "(inside a function, by importlib) at the top of app.py",
    )


def hint_lines(hints: tuple[str, ...]) -> str:
    """Several hints as one `HostError.hint` (each on its own `  hint:` line as the command line prints it)."""
    return "\n  hint: ".join(hints)


class ErrorCode(enum.StrEnum):
    """Why a tooling operation failed; values match the WIT enum `error-code`."""

    NOT_FOUND = "not-found"
    DENIED = "denied"
    INVALID_ARGUMENTS = "invalid-arguments"
    TOOL_FAILED = "tool-failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    UNAVAILABLE = "unavailable"
    LIMIT_EXCEEDED = "limit-exceeded"
    PROTOCOL = "protocol"
    INTERNAL = "internal"
    UNAUTHORIZED = "unauthorized"


class AgentHostError(Exception):
    """Base of every exception the host raises to an embedder: `ToolingError` (what a guest sees) and
    `HostError` (what the person running the host sees); `except AgentHostError` catches both. Each
    carries `message`, text for a person. A mistake in the calling code stays Python's own (`TypeError`
    for a value of the wrong type, `RuntimeError` for a use after close)."""

    message: str


class ToolingError(AgentHostError):
    """A failure a guest can see and act on.

    `data` is JSON text or None. Equality is by value so tests can compare whole errors.
    """

    def __init__(self, code: ErrorCode, message: str, data: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def detached(self) -> ToolingError:
        """A copy to keep: the same value, without the traceback and chained exceptions, which hold
        every frame below the raise (a guest's store and the arguments it passed among them)."""
        return ToolingError(self.code, self.message, self.data)

    def __repr__(self) -> str:
        return f"ToolingError({self.code.value!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolingError):
            return NotImplemented
        return (self.code, self.message, self.data) == (other.code, other.message, other.data)

    def __hash__(self) -> int:
        return hash((self.code, self.message, self.data))


class HostError(AgentHostError):
    """Base of every error reported to the person running the host."""

    reference: ClassVar[str] = "host-error"
    exit_code: ClassVar[int] = ExitCode.USAGE_ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n  hint: {self.hint}"


class ConfigError(HostError):
    """The configuration file is missing, malformed or inconsistent. `problems` holds each problem
    on its own (a line, and its hint when it has one); the message joins them."""

    reference = "config-error"

    def __init__(self, message: str, *, hint: str | None = None, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message, hint=hint)
        self.problems = problems or (str(self),)


class UsageError(HostError):
    """The command line asked for something impossible."""

    reference = "usage-error"


class BuildError(HostError):
    """componentize-py could not build a guest."""

    reference = "build-error"


class ComponentError(HostError):
    """A `.wasm` file is not a component this host can run (wrong world, not a component)."""

    reference = "component-error"


class Interrupted(HostError):
    """A signal (or an embedder's stop request) ended the command before it finished.

    `exit_code` is that of the signal: 128 + its number (SIGINT 130, SIGTERM 143), as shells report
    a process killed by that signal; `ExitCode.INTERRUPTED` when no signal came with the request."""

    reference = "interrupted"

    def __init__(self, message: str, *, signum: int | None = None) -> None:
        super().__init__(message)
        self.exit_code = ExitCode.for_signal(signum)  # type: ignore[misc]


class GuestsStuck(HostError):
    """No guest starts while `MAX_ABANDONED` guests of this process are blocked where the host cannot
    stop them."""

    reference = "guests-stuck"
    exit_code = ExitCode.TRAP


class UnsafeCacheError(HostError):
    """A cache folder that another user may write in, or owned by another user (exit 2)."""

    reference = "unsafe-cache"


class SdkMismatch(HostError):
    """The installed MCP SDK lacks a private name a hook needs, and there is no public path."""

    reference = "sdk-mismatch"


class CassetteError(UsageError):
    """A cassette that cannot be read, written or used (exit 2)."""

    reference = "cassette-error"


class ReplayDiverged(HostError):
    """A replay asked for with another input than the recorded one: diverged before it starts (exit 4)."""

    reference = "diverged"
    exit_code = ExitCode.DIVERGED


class WorkerFailure(HostError):
    """An error a worker met starting an agent (a component that does not load, a stop request)."""

    reference = "worker-error"


class UvicornMismatch(HostError):
    """The installed uvicorn lacks an internal `serve --http` cannot serve safely without."""

    reference = "uvicorn-mismatch"
