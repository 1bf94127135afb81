"""A tooling as a Python program uses it: `ToolingClient` (blocking) and `AsyncToolingClient`.

`Host.tooling(name, agent=...)` and `Host.atooling(...)` make them. Every operation goes through the
core a guest's operations go through (`session.core`): the agent's grants, limits, approvals and
audit apply. Arguments and results are Python values, not the WIT's JSON text and handles: `call`
returns a `ToolResult` whether the tool succeeded or reported an error (`is_error`); a refusal
(`denied`, `limit-exceeded`, `unavailable`, ...) raises `ToolingError`. A subscription is an
iterator of updates (`for`, `async for`) ended by `close()` or its `with` block; one client's
subscriptions share its inbox, each keeping only its newest unread update. A client is used by one
thread (the async one: one task, on an asyncio loop) at a time; `close()` cancels what it opened.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar, cast

import anyio
import anyio.to_thread

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallOutcome, Envelope, JsonObject, ResourceData, ResourceSpec, ToolSpec
from agent_host.session import GuestSession
from agent_host.session.subscriptions import SubscriptionKind
from agent_host.toolings import Tooling

_U = TypeVar("_U")

POLL: Final = 1.0
"""Seconds one wait of a subscription lasts before it looks again whether it was closed (what an
async iteration's cancellation may wait)."""


@dataclass(frozen=True)
class ToolResult:
    """A finished tool call: MCP's `content` blocks, its `structuredContent` (None when the tool gave
    none) and `isError` (the tool ran and reported a failure)."""

    content: list[JsonObject]
    structured: JsonObject | None = None
    is_error: bool = False

    @property
    def text(self) -> str:
        """The text blocks of `content`, joined by newlines."""
        texts = (b.get("text") for b in self.content if b.get("type") == "text")
        return "\n".join(t for t in texts if isinstance(t, str))

    @classmethod
    def of_json(cls, text: str) -> ToolResult:
        """A result as the host shaped it (a call's value, or a `tool-failed` error's `data`)."""
        value = json.loads(text)
        structured = value.get("structuredContent")
        content = [block for block in value.get("content", []) if isinstance(block, dict)]
        return cls(content, structured if isinstance(structured, dict) else None, value.get("isError") is True)


def _arguments(arguments: Mapping[str, Any] | None) -> str:
    """`arguments` as the JSON text of an object; `TypeError` when they are not JSON."""
    try:
        return json.dumps(dict(arguments or {}), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the arguments of a tool call must be a JSON object: {exc}") from None


def _result(outcome: CallOutcome | ToolingError) -> ToolResult:
    """A call's outcome as a `ToolResult`: a `tool-failed` error carrying the tool's result is that
    result (`is_error`); any other error is raised."""
    if not isinstance(outcome, ToolingError):
        return ToolResult.of_json(outcome.value)
    if outcome.code is ErrorCode.TOOL_FAILED and outcome.data is not None:
        return ToolResult.of_json(outcome.data)
    raise outcome


class _Inbox:
    """The session's inbox read by several subscriptions: what arrives for another one is kept for
    it, only the newest (an update replaces the one not taken yet, as the inbox does; an error
    ending a subscription is kept over any update). Thread-safe."""

    def __init__(self, session: GuestSession) -> None:
        self._session = session
        self._kept: dict[str, Envelope | None] = {}
        self._lock = threading.Lock()

    def open(self, sub_id: str) -> None:
        with self._lock:
            self._kept[sub_id] = None

    def forget(self, sub_id: str) -> None:
        with self._lock:
            self._kept.pop(sub_id, None)

    def next(self, sub_id: str, timeout: float) -> Envelope | None:
        """The next envelope of `sub_id`, waiting up to `timeout` seconds; None when none came."""
        with self._lock:
            if sub_id not in self._kept:
                return None
            if (kept := self._kept[sub_id]) is not None:
                self._kept[sub_id] = None
                return kept
            envelope = self._session.recv(max(1, int(timeout * 1000)))
            if envelope is None or envelope.id == sub_id:
                return envelope
            if envelope.id in self._kept:
                held = self._kept[envelope.id]
                if held is None or held.kind != "error":
                    self._kept[envelope.id] = envelope
            return None


class Subscription(Generic[_U]):
    """Updates of one subscription, in order, as they come (`for update in sub`); the iteration ends
    once the subscription or its client is closed. One the server ended raises its `ToolingError`."""

    def __init__(self, client: ToolingClient, sub_id: str, kind: SubscriptionKind) -> None:
        self.id = sub_id
        self._client = client
        self._kind = kind
        self._closed = False

    def poll(self, timeout: float) -> tuple[bool, _U | None]:
        """Wait up to `timeout` seconds for the next update: (False, update), (False, None) when none
        came, (True, None) once the subscription or its client is closed."""
        if self._closed or self._client.closed:
            return True, None
        envelope = self._client._inbox.next(self.id, timeout)
        if envelope is None:
            return self._closed or self._client.closed, None
        if isinstance(envelope.payload, ToolingError):
            self.close()
            raise envelope.payload
        return False, cast(_U, envelope.payload)

    def __iter__(self) -> Iterator[_U]:
        return self

    def __next__(self) -> _U:
        while True:
            ended, update = self.poll(POLL)
            if ended:
                raise StopIteration
            if update is not None:
                return update

    def close(self) -> None:
        """Unsubscribe, upstream too; idempotent."""
        if not self._closed:
            self._closed = True
            self._client._unsubscribe(self.id, self._kind)

    def __enter__(self) -> Subscription[_U]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ToolingClient:
    """One tooling for a blocking program (see the module docstring). `Host.tooling` makes it."""

    def __init__(self, session: GuestSession, name: str) -> None:
        """Connect to tooling `name` as `session`'s agent; `ToolingError` (`not-found`, `denied`,
        `unavailable`) when it cannot be had. The client owns `session`."""
        self.name = name
        self._session = session
        self._inbox = _Inbox(session)
        try:
            self._rep = session.get(name)
        except BaseException:
            session.close()
            raise

    @property
    def closed(self) -> bool:
        return self._session.inbox.closed

    def list_tools(self) -> list[ToolSpec]:
        """The tools the agent may see, all pages, in the server's order."""
        return self._session.list_tools(self._rep)

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call tool `name` with `arguments` (a JSON object) and wait for its result; a result the
        tool marked `isError` is returned (`is_error`), a refusal raises `ToolingError`."""
        text = _arguments(arguments)
        try:
            outcome: CallOutcome | ToolingError = self._session.call_tool_blocking(self._rep, name, text)
        except ToolingError as exc:
            outcome = exc
        return _result(outcome)

    def list_resources(self) -> list[ResourceSpec]:
        """The resources the agent may see."""
        return self._session.list_resources(self._rep)

    def read(self, uri: str) -> ResourceData:
        """Resource `uri` (`text`, or `blob` in base64)."""
        return self._session.read_resource(self._rep, uri)

    def subscribe(self, uri: str) -> Subscription[ResourceData]:
        """Resource `uri`'s contents each time the server says it changed."""
        return self._subscribed("resource", uri)

    def subscribe_tool_list(self) -> Subscription[list[ToolSpec]]:
        """The tool list (what the agent may see of it) each time the server says it changed."""
        return self._subscribed("tool-list")

    def subscribe_resource_list(self) -> Subscription[list[ResourceSpec]]:
        """The resource list (what the agent may see of it) each time the server says it changed."""
        return self._subscribed("resource-list")

    def _subscribed(self, kind: SubscriptionKind, uri: str = "") -> Subscription[Any]:
        sub_id = self._session.subscribe(self._rep, kind, uri)
        self._inbox.open(sub_id)
        return Subscription(self, sub_id, kind)

    def _unsubscribe(self, sub_id: str, kind: SubscriptionKind) -> None:
        self._inbox.forget(sub_id)
        if not self.closed:
            self._session.unsubscribe(self._rep, kind, sub_id)

    def close(self) -> None:
        """Cancel everything the client opened (upstream too) and close it; idempotent."""
        self._session.close()

    def __enter__(self) -> ToolingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncSubscription(Generic[_U]):
    """`Subscription` for `async for` (each wait of up to `POLL` seconds on a worker thread)."""

    def __init__(self, sync: Subscription[_U]) -> None:
        self._sync = sync

    def __aiter__(self) -> AsyncIterator[_U]:
        return self

    async def __anext__(self) -> _U:
        while True:
            ended, update = await anyio.to_thread.run_sync(self._sync.poll, POLL)
            if ended:
                raise StopAsyncIteration
            if update is not None:
                return update

    async def aclose(self) -> None:
        """Unsubscribe, upstream too; idempotent."""
        await anyio.to_thread.run_sync(self._sync.close)

    async def __aenter__(self) -> AsyncSubscription[_U]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncToolingClient:
    """One tooling for a coroutine on an asyncio loop (see the module docstring): `async with
    host.atooling(name) as client`. Calls, listings and reads are one coroutine of the core on the
    host's loop (`Bridge.run`, as `serve` runs them); subscriptions wait on a worker thread."""

    def __init__(self, session: GuestSession, name: str) -> None:
        """Not connected yet: `async with` (or `await connect()`) connects. Owns `session`."""
        self.name = name
        self._session = session
        self._sync: ToolingClient | None = None
        self._tooling: Tooling | None = None

    async def connect(self) -> AsyncToolingClient:
        """Connect; `ToolingError` (`not-found`, `denied`, `unavailable`) when it cannot be had."""
        if self._sync is None:
            self._sync = await anyio.to_thread.run_sync(ToolingClient, self._session, self.name)
            self._tooling = self._session.handle(self._sync._rep).tooling
        return self

    def _connected(self) -> Tooling:
        if self._tooling is None:
            raise RuntimeError("AsyncToolingClient: use it in `async with` (or await connect() first)")
        return self._tooling

    async def list_tools(self) -> list[ToolSpec]:
        """The tools the agent may see, all pages, in the server's order."""
        core, caller = self._session.core, self._session.caller
        return await self._session.bridge.run(core.list_tools, self._connected(), caller)

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """As `ToolingClient.call`. Cancelling the task cancels the call, upstream too."""
        core, caller = self._session.core, self._session.caller
        text = _arguments(arguments)
        try:
            outcome: CallOutcome | ToolingError = await self._session.bridge.run(
                core.call, self._connected(), name, text, caller
            )
        except ToolingError as exc:
            outcome = exc
        return _result(outcome)

    async def list_resources(self) -> list[ResourceSpec]:
        """The resources the agent may see."""
        core, caller = self._session.core, self._session.caller
        return await self._session.bridge.run(core.list_resources, self._connected(), caller)

    async def read(self, uri: str) -> ResourceData:
        """Resource `uri` (`text`, or `blob` in base64)."""
        core, caller = self._session.core, self._session.caller
        return await self._session.bridge.run(core.read_resource, self._connected(), uri, caller)

    async def subscribe(self, uri: str) -> AsyncSubscription[ResourceData]:
        """Resource `uri`'s contents each time the server says it changed."""
        return AsyncSubscription(await self._sync_op(lambda sync: sync.subscribe(uri)))

    async def subscribe_tool_list(self) -> AsyncSubscription[list[ToolSpec]]:
        """The tool list each time the server says it changed."""
        return AsyncSubscription(await self._sync_op(lambda sync: sync.subscribe_tool_list()))

    async def subscribe_resource_list(self) -> AsyncSubscription[list[ResourceSpec]]:
        """The resource list each time the server says it changed."""
        return AsyncSubscription(await self._sync_op(lambda sync: sync.subscribe_resource_list()))

    async def _sync_op(self, op: Callable[[ToolingClient], _U]) -> _U:
        self._connected()
        assert self._sync is not None
        sync = self._sync
        return await anyio.to_thread.run_sync(op, sync)

    async def aclose(self) -> None:
        """Cancel everything the client opened (upstream too) and close it; idempotent."""
        await anyio.to_thread.run_sync(self._session.close)

    async def __aenter__(self) -> AsyncToolingClient:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
