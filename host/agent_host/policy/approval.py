"""Approvals: asking before a call that needs a capability the agent's `require_approval` lists.

An `Approver` decides one `ApprovalRequest` at a time; an approval covers that one invocation only,
and the next call asks again. An approver that is also an `Answerer` answers servers' questions
(`elicitation = "ask"`). Approvers run on the bridge loop; blocking work (reading the terminal)
runs in a worker thread.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Final, Protocol, runtime_checkable

import anyio.to_thread


@dataclass(frozen=True)
class ApprovalRequest:
    """One call to approve: the agent, the tooling and tool, the capabilities that need approval and
    the effective arguments (what the tool's `approval_arguments` shows)."""

    agent: str
    tooling: str
    tool: str
    capabilities: frozenset[str]
    """The capabilities of this call that need approval."""
    arguments: dict[str, Any]
    """The effective arguments, as the tool shows them for approval."""

    def describe(self) -> str:
        needs = ", ".join(sorted(self.capabilities))
        arguments = json.dumps(self.arguments, ensure_ascii=False)
        if len(arguments) > 500:
            arguments = arguments[:500] + "..."
        return (
            f"agent {self.agent!r} calls tool {self.tool!r} of tooling {self.tooling!r} (needs {needs}) "
            f"with {arguments}"
        )


@dataclass(frozen=True)
class Decision:
    """An approver's answer to one `ApprovalRequest`."""

    approved: bool
    """Whether the call may go ahead."""
    reason: str
    """Why; a refused call's `denied` message ends with it."""


class Approver(Protocol):
    """Decides one `ApprovalRequest` at a time."""

    async def decide(self, request: ApprovalRequest) -> Decision: ...


@dataclass(frozen=True)
class ElicitationRequest:
    """A server's question, put to a person (`elicitation = "ask"`): who asks, for which agent, the
    message and the JSON Schema the answer must match."""

    tooling: str
    agent: str | None
    message: str
    schema: dict[str, Any]
    url: str | None = None
    """URL mode: the page to open (out of band); answering with any object (`{}`) consents."""

    def describe(self) -> str:
        who = f" (during a call of agent {self.agent!r})" if self.agent else ""
        opens = f" (it asks you to open {self.url})" if self.url else ""
        return f"the server of tooling {self.tooling!r} asks{who}: {self.message}{opens}"


@runtime_checkable
class Answerer(Protocol):
    """An approver that can also answer servers' questions: the content (a JSON object matching the
    request's schema) to accept with, or None to decline."""

    async def answer(self, request: ElicitationRequest) -> dict[str, Any] | None: ...


class DenyAll:
    """The default: nothing is approved; the refusal says how to be asked instead (`reason`)."""

    def __init__(
        self, reason: str = "no one approves calls here: run with `--approve ask` to be asked, or `--approve all`"
    ) -> None:
        self._reason = reason

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(False, self._reason)


class ApproveAll:
    """Everything is approved (`agent-host run --approve all`)."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(True, "approved by --approve all")


class CallbackApprover:
    """`fn(request)` decides, returning a bool (sync or async): for embedding and for tests; with
    `answer`, `answer(request)` answers servers' questions (content, or None to decline)."""

    def __init__(
        self,
        fn: Callable[[ApprovalRequest], bool | Awaitable[bool]],
        answer: Callable[[ElicitationRequest], dict[str, Any] | None | Awaitable[dict[str, Any] | None]] | None = None,
    ) -> None:
        self._fn = fn
        self._answer = answer

    async def answer(self, request: ElicitationRequest) -> dict[str, Any] | None:
        if self._answer is None:
            return None
        content = self._answer(request)
        if inspect.isawaitable(content):
            content = await content
        return content

    async def decide(self, request: ApprovalRequest) -> Decision:
        answer = self._fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return Decision(bool(answer), "approved" if answer else "refused by the approval handler")


class TerminalApprover:
    """Asks on the terminal (`/dev/tty`; `--approve ask`), one question at a time however many guests
    ask at once; no terminal, or anything but "y"/"yes", is a refusal."""

    def __init__(self, terminal: str = "/dev/tty") -> None:
        self._terminal = terminal
        self._lock = threading.Lock()

    async def decide(self, request: ApprovalRequest) -> Decision:
        return await anyio.to_thread.run_sync(self._ask, request, abandon_on_cancel=True)

    def _ask(self, request: ApprovalRequest) -> Decision:
        answer = self._prompt(f"approve? {request.describe()} [y/N] ", ANSWER_LIMIT)
        if answer is None:
            return Decision(False, "approval is required but there is no terminal to ask on")
        if answer.lower() in ("y", "yes"):
            return Decision(True, "approved on the terminal")
        return Decision(False, "refused on the terminal")

    async def answer(self, request: ElicitationRequest) -> dict[str, Any] | None:
        return await anyio.to_thread.run_sync(self._answer, request, abandon_on_cancel=True)

    def _answer(self, request: ElicitationRequest) -> dict[str, Any] | None:
        """The question and the schema on the terminal; a JSON object typed on one line accepts,
        an empty line (or anything not a JSON object, or no terminal) declines."""
        schema = json.dumps(request.schema, ensure_ascii=False)
        how = (
            "  open it and answer y when done (anything else declines): "
            if request.url
            else f"  answer with a JSON object matching {schema}\n  (an empty line declines): "
        )
        line = self._prompt(f"{request.describe()}\n{how}", JSON_ANSWER_LIMIT)
        if not line:
            return None
        if request.url:
            return {} if line.lower() in ("y", "yes") else None
        try:
            content = json.loads(line)
        except ValueError:
            return None
        return content if isinstance(content, dict) else None

    def _prompt(self, text: str, limit: int) -> str | None:
        """`agent-host: TEXT` on the terminal and the line typed (stripped, at most `limit` bytes),
        one prompt at a time; None when there is no terminal."""
        with self._lock:
            try:
                # Unbuffered bytes: a terminal is not seekable, so text mode "r+" (a BufferedRandom)
                # cannot even be opened on one.
                with open(self._terminal, "r+b", buffering=0) as tty:
                    tty.write(f"\nagent-host: {text}".encode())
                    return _read_line(tty, limit).strip()
            except OSError:
                return None


ANSWER_LIMIT: Final = 256
"""Bytes of an answer read from the terminal; the rest of a longer line is ignored."""

JSON_ANSWER_LIMIT: Final = 64 * 1024
"""Bytes of a JSON answer to a server's question read from the terminal."""


def _read_line(tty: BinaryIO, limit: int = ANSWER_LIMIT) -> str:
    """One line typed on `tty` (without its end), read byte by byte so nothing past it is consumed."""
    line = bytearray()
    while len(line) < limit:
        byte = tty.read(1)
        if not byte or byte in (b"\n", b"\r"):
            break
        line += byte
    return line.decode("utf-8", errors="replace")
