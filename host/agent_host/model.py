"""Plain data shared by every layer: tool and resource specs, call results, envelopes, operations.

Values only: no I/O, no policy, no wire or WIT encoding (how resource content reaches a guest is
`runtime.wit_values`' business). `CallResult` is MCP's wire form of a finished call, built by its
constructors so every tooling kind writes it the same way. Imports nothing of the host but `errors`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

from pydantic import PlainSerializer

from agent_host.errors import ExitCode, HostError, ToolingError

__all__ = (
    "EVENT_PAYLOADS",
    "FINAL_KINDS",
    "CallOutcome",
    "CallResult",
    "Envelope",
    "EventKind",
    "JsonObject",
    "Names",
    "Operation",
    "Progress",
    "ResourceData",
    "ResourceSpec",
    "ToolSpec",
)

JsonObject = dict[str, Any]
"""A parsed JSON object."""

Names = Annotated[frozenset[str], PlainSerializer(sorted, return_type=list[str])]
"""A set of names, written as a sorted list (a cassette's bytes do not depend on hashing)."""


class Operation(enum.StrEnum):
    """A tooling operation, named as the WIT function a guest calls (the audit log's `operation`)."""

    GET = "get"
    LIST_TOOLS = "list-tools"
    CALL_TOOL = "call-tool"
    CALL_TOOL_BLOCKING = "call-tool-blocking"
    LIST_RESOURCES = "list-resources"
    READ_RESOURCE = "read-resource"
    SUBSCRIBE_RESOURCE = "subscribe-resource"
    SUBSCRIBE_RESOURCE_LIST = "subscribe-resource-list"
    SUBSCRIBE_TOOL_LIST = "subscribe-tool-list"
    UNSUBSCRIBE_RESOURCE = "unsubscribe-resource"
    UNSUBSCRIBE_RESOURCE_LIST = "unsubscribe-resource-list"
    UNSUBSCRIBE_TOOL_LIST = "unsubscribe-tool-list"
    RESPOND = "respond"
    GET_PROVIDER = "get-provider"
    MODELS = "models"
    CHAT = "chat"
    CHAT_STREAM = "chat-stream"


@dataclass(frozen=True)
class ToolSpec:
    """A tool as listed; schemas are parsed JSON objects."""

    name: str
    description: str | None
    input_schema: JsonObject
    output_schema: JsonObject | None = None
    annotations: JsonObject | None = None
    capabilities: Names | None = None
    """What the tool declares it needs (Python and mock tools); None: derive it (see `capabilities`)."""
    builtin: bool = False
    """A tool shipped with the host (a Python tool's `is_builtin`); shown in listings."""
    task_support: str | None = None
    """An MCP tool's `execution.taskSupport` ("forbidden", "optional", "required"); None: not said."""


@dataclass(frozen=True)
class ResourceSpec:
    """A resource as listed."""

    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True)
class ResourceData:
    """A resource's content: exactly one of `text` and `blob` (base64) is set."""

    uri: str
    mime_type: str | None
    text: str | None = None
    blob: str | None = None

    @property
    def size(self) -> int:
        """Characters of the content as held (base64 for a blob); what `max_result_bytes` bounds."""
        return len(self.text or self.blob or "")


@dataclass(frozen=True)
class CallResult:
    """A finished tool call in MCP's wire form: `content`, optional `structuredContent`, `isError`.

    Build it with the constructors, so every kind writes the same keys in the same order (the
    guest sees this object as JSON text).
    """

    value: JsonObject = field(default_factory=dict)

    @classmethod
    def from_content(
        cls, content: Iterable[JsonObject], *, structured: JsonObject | None = None, is_error: bool = False
    ) -> CallResult:
        """A result of the given content blocks (and structured content, when given)."""
        value: JsonObject = {"content": list(content)}
        if structured is not None:
            value["structuredContent"] = structured
        value["isError"] = is_error
        return cls(value)

    @classmethod
    def from_text(cls, text: str) -> CallResult:
        """A successful result of one text block."""
        return cls.from_content([_text_block(text)])

    @classmethod
    def from_structured(cls, value: Any) -> CallResult:
        """A successful result carrying a JSON value, as the MCP SDK writes one: the value as text
        (a string as itself) and as `structuredContent` (a non-object `v` as `{"result": v}`).

        Raises `TypeError` or `ValueError` when `value` is not JSON.
        """
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        structured = value if isinstance(value, dict) else {"result": value}
        return cls.from_content([_text_block(text)], structured=structured)

    @classmethod
    def from_error(cls, message: str) -> CallResult:
        """A failed result (`isError`) whose one text block is `message`."""
        return cls.from_content([_text_block(message)], is_error=True)

    @property
    def is_error(self) -> bool:
        return bool(self.value.get("isError", False))

    def text(self) -> str:
        """The text blocks of `content`, joined by newlines."""
        blocks = self.value.get("content", [])
        texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))


def _text_block(text: str) -> JsonObject:
    return {"type": "text", "text": text}


@dataclass(frozen=True)
class CallOutcome:
    """A successful call as the guest sees it (WIT `tool-result`): arguments and value as JSON text."""

    name: str
    arguments: str
    value: str


@dataclass(frozen=True)
class Asked:
    """A question a server asks during a call (the payload of an `elicitation` envelope)."""

    message: str
    schema: JsonObject
    """JSON Schema of the answer's content."""


@dataclass(frozen=True)
class Progress:
    """A progress report of a call in flight."""

    progress: float
    total: float | None
    message: str | None


Role = Literal["system", "user", "assistant", "tool"]
"""Who wrote a chat message (WIT `role`)."""

FinishReason = Literal["stop", "length", "tool-calls", "content-filter", "other"]
"""Why a model stopped (WIT `finish-reason`)."""


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call one tool (WIT `tool-call`): the provider's `id`, the tool's `name`
    as offered, its `arguments` as the text of a JSON object."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation (WIT `chat-message`)."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls an assistant message makes (empty otherwise)."""
    tool_call_id: str | None = None
    """For a `tool` message: the call it answers."""


@dataclass(frozen=True)
class ChatRequest:
    """What a guest asks a model (WIT `chat-request`); `model` None: the provider's default."""

    messages: tuple[ChatMessage, ...]
    model: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    temperature: float | None = None
    response_schema: str | None = None
    """A JSON Schema (text) the answer must match: structured output."""


@dataclass(frozen=True)
class Usage:
    """Tokens a chat used, as the provider reported them (WIT `usage`)."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ChatResult:
    """A model's whole answer (WIT `chat-result`)."""

    model: str
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: FinishReason
    usage: Usage


@dataclass(frozen=True)
class ChatDelta:
    """A piece of a streamed answer (WIT `chat-delta`): some text, or one whole tool call."""

    content: str | None = None
    tool_call: ToolCall | None = None


EventKind = Literal[
    "tool-result",
    "error",
    "progress",
    "resource-list-updated",
    "resource-updated",
    "tool-list-updated",
    "elicitation",
    "chat-delta",
    "chat-end",
]
"""The cases of the WIT `event` variant."""

FINAL_KINDS: Final = frozenset({"tool-result", "error", "chat-end"})
"""The kinds that end a call."""

EVENT_PAYLOADS: Final[dict[EventKind, Any]] = {
    "tool-result": CallOutcome,
    "error": ToolingError,
    "progress": Progress,
    "resource-list-updated": list[ResourceSpec],
    "resource-updated": ResourceData,
    "tool-list-updated": list[ToolSpec],
    "elicitation": Asked,
    "chat-delta": ChatDelta,
    "chat-end": ChatResult,
}
"""The type of an envelope's payload, by its kind."""


@dataclass(frozen=True)
class Envelope:
    """An event with the id of the call or subscription it belongs to. `payload` is plain data:
    a `CallOutcome`, a `ToolingError`, a `Progress`, a `ResourceData` or a list of specs."""

    id: str
    kind: EventKind
    payload: object


class RunStatus(enum.StrEnum):
    """How a guest's run ended; for one that never started, the `reference` of the host error that
    kept it from starting (every `HostError`'s reference is a member: a test checks it)."""

    OK = "ok"
    """`run` returned its answer."""
    ERROR = "error"
    """`run` returned `err` (an exception escaping it, in either language)."""
    TRAP = "trap"
    """The guest trapped, or the host stopped it at a limit or on a stop request (`RunResult.tripped`)."""
    DIVERGED = "diverged"
    """A replay asked for something its cassette does not have next."""
    CRASHED = "crashed"
    """What ran it failed: its Ray worker died, or the host met an internal error."""
    INTERRUPTED = "interrupted"
    HOST_ERROR = "host-error"
    CONFIG_ERROR = "config-error"
    USAGE_ERROR = "usage-error"
    CASSETTE_ERROR = "cassette-error"
    BUILD_ERROR = "build-error"
    COMPONENT_ERROR = "component-error"
    GUESTS_STUCK = "guests-stuck"
    UNSAFE_CACHE = "unsafe-cache"
    SDK_MISMATCH = "sdk-mismatch"
    UVICORN_MISMATCH = "uvicorn-mismatch"
    WORKER_ERROR = "worker-error"


RUN_EXIT_CODES: Final[dict[RunStatus, int]] = {
    RunStatus.OK: ExitCode.SUCCESS,
    RunStatus.ERROR: ExitCode.GUEST_ERROR,
    RunStatus.TRAP: ExitCode.TRAP,
    RunStatus.DIVERGED: ExitCode.DIVERGED,
    RunStatus.CRASHED: ExitCode.TRAP,
}
"""The exit code of a run by its status; a run that never started has its error's (`RunResult.code`)."""

Tripped = Literal["stopped", "cpu_time", "wall_time", "open_files", "memory"]
"""What of the host's made a run trap: a `RunGuard` check, or `memory` (the host refused a growth)."""


@dataclass(frozen=True)
class RunError:
    """Why a run failed: its `status`, the text of the failure as the host reports it (for `err`,
    after the code when split off), and the WIT `error-code` of a host error the guest let escape
    (host state, never read from the guest's text); None for any other failure."""

    status: RunStatus
    message: str
    code: str | None = None


@dataclass(frozen=True)
class RunResult:
    """How one run of a guest ended (or, for one that never started, why not): what `Host.run`,
    the command line, `serve`, Ray and the pytest fixture all report."""

    agent: str
    status: RunStatus
    text: str
    """`run`'s answer (ok), its error string (error), the trap reason (trap), or the host error."""
    duration: float
    """Seconds the run took."""
    inbox_peak: int = 0
    """Most envelopes the guest's inbox held at once."""
    code: int | None = None
    """The exit code, when `status` is not one of `RUN_EXIT_CODES` (or is, but was ended otherwise)."""
    tripped: Tripped | None = None
    """For a `trap` the host made: which limit, or a stop request."""
    error_code: str | None = None
    """For `error`: the WIT `error-code` of the host error `text` is (`CODE: message`, as the host
    returned it to this guest); None for any other text, whatever it looks like."""
    usage: Usage = Usage()
    """The tokens its chats used, as the providers reported them (`provider` interface)."""
    stderr: str = ""
    """The guest's output lines and the host's messages of this run (filled by the pytest fixture)."""
    audit: list[dict[str, Any]] = field(default_factory=list)
    """The audit records of this run, one dict per operation (filled by the pytest fixture)."""

    @classmethod
    def not_started(cls, agent: str, error: HostError) -> RunResult:
        """The result of a run that `error` kept from starting: its reference is the status."""
        return cls(agent, RunStatus(error.reference), f"agent {agent}: {error.message}", 0.0, code=error.exit_code)

    @property
    def exit_code(self) -> int:
        """What `agent-host run` exits with: 0 ok, 1 err, 2 not started, 3 trap or limit, 4 diverged."""
        return self.code if self.code is not None else RUN_EXIT_CODES[self.status]

    @property
    def output(self) -> str:
        """`run`'s answer; "" unless `status` is ok."""
        return self.text if self.status is RunStatus.OK else ""

    @property
    def error(self) -> RunError | None:
        """Why it failed; None when `status` is ok. An `err` that is a host error the host returned
        to the guest (`CODE: message`, host state: `error_code`) is split."""
        if self.status is RunStatus.OK:
            return None
        code = self.error_code
        prefix = f"{code}: "
        if self.status is RunStatus.ERROR and code is not None and self.text.startswith(prefix):
            return RunError(self.status, self.text[len(prefix) :], code)
        return RunError(self.status, self.text)
