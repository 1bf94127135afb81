"""Toolings re-exported to clients (`[serve] toolings`), through the policy of agent `serve`.

The remote client is an agent: every operation runs in a `GuestSession` of agent `serve` under the
policy of `[serve] grants`, so grants, argument validation, capabilities, approvals, limits and the
audit log apply exactly as to a guest. A tool is offered as `TOOLING.TOOL` (an offered tooling's name
has no '.', so the first '.' splits it); a resource keeps its URI and belongs to the first offered
tooling listing it. A call or a read is one coroutine on the bridge loop (`session.core`); a call
the client cancels is cancelled upstream. Listings and subscriptions run in a worker thread, in a
fresh session closed at their end. A tooling that
cannot be reached is left out of lists (logged); its calls and reads answer `unavailable`. A tool
listing is kept while the relay watches the tooling's tool list, until it changes. Only a resource
that some offered tooling lists may be subscribed to (`subscribable`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import closing
from typing import Any, Final

import anyio
import anyio.to_thread

from agent_host._support import off_loop
from agent_host.app.host import Host
from agent_host.config.models import SERVE_CLIENT
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import JsonObject, Operation, Progress, ResourceData, ResourceSpec
from agent_host.policy.grants import AgentPolicy
from agent_host.serve.answers import Answer, ServedTool
from agent_host.serve.feed import Feed
from agent_host.session import Caller, GuestSession
from agent_host.session.audit_budget import AuditBudget
from agent_host.session.guest_log import MAX_LOG_MESSAGE, cut
from agent_host.toolings import ProgressFn

logger = logging.getLogger(__name__)

CLIENT: Final = SERVE_CLIENT
"""The agent a remote client acts as (in messages and the audit log)."""

PROGRESS_BUFFER: Final = 256 * 1024
"""Bytes of one call's progress reports waiting to be forwarded (each counts its message and
`REPORT_OVERHEAD`); more are dropped (a later report supersedes them). Messages are cut as log lines
are (`guest_log.cut`)."""

REPORT_OVERHEAD: Final = 100
"""Bytes one waiting progress report counts for beyond its message."""


def _report_cost(report: Progress) -> int:
    return len((report.message or "").encode("utf-8", "surrogatepass")) + REPORT_OVERHEAD


def _cut(report: Progress) -> Progress:
    if report.message is None or len(report.message) <= MAX_LOG_MESSAGE:
        return report
    return Progress(report.progress, report.total, cut(report.message))


AsyncProgressSink = Callable[[Progress], Awaitable[None]]


class ToolingProxy:
    """The offered toolings (see the module docstring). Its coroutines run on the server's loop."""

    def __init__(self, host: Host, toolings: Sequence[str], policy: AgentPolicy) -> None:
        self._host = host
        self.toolings = tuple(toolings)
        self.policy = policy
        self._owners: dict[str, str] = {}
        """Resource URI → the offered tooling it belongs to, as last listed."""
        self._listed: dict[str, list[ServedTool]] = {}
        """Tooling → its offered tools, kept while the relay watches its tool list."""
        self._watched: set[str] = set()
        self._core = host.core(CLIENT, policy)
        self._generation: dict[str, int] = {}
        """Tooling → a counter bumped by every change: a listing begun before one is not kept."""

    def watching(self, tooling: str) -> None:
        """From any thread: changes of `tooling`'s tool list are relayed from now on (`changed` is
        called for each), so its listing may be kept until the next change."""
        self._watched.add(tooling)
        self.changed(tooling)

    def changed(self, tooling: str) -> None:
        """From any thread: `tooling`'s tool list changed (or may have): list it again next time."""
        self._generation[tooling] = self._generation.get(tooling, 0) + 1
        self._listed.pop(tooling, None)

    def session(self, audit_budget: AuditBudget | None = None) -> GuestSession:
        """A new session of agent `serve` (use it from one worker thread, then close it), its audit
        lines charged to `audit_budget` (the client's allowance it acts for) when given."""
        return self._host.session(CLIENT, self.policy, audit_budget=audit_budget)

    def route(self, name: str) -> tuple[str, str] | None:
        """(tooling, tool) of an offered tool name `TOOLING.TOOL`; None when `name` is not one."""
        tooling, dot, tool = name.partition(".")
        return (tooling, tool) if dot and tool and tooling in self.toolings else None

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The input schema of offered tool `name` as its tooling last listed it (None: not listed
        yet, or not an offered tool name). From any thread; never asks the server."""
        route = self.route(name)
        if route is None:
            return None
        spec = self._host.toolings.get(route[0]).cached_tool_spec(route[1])
        return spec.input_schema if spec is not None else None

    # -- tools -------------------------------------------------------------------------------------

    async def tools(self, audit_budget: AuditBudget | None = None) -> list[ServedTool]:
        """The tools of the offered toolings that the grants let the client see, in tooling order;
        the audit lines of listing them charged to `audit_budget` (the client's allowance)."""
        return await anyio.to_thread.run_sync(self._tools, audit_budget)

    def _tools(self, audit_budget: AuditBudget | None) -> list[ServedTool]:
        served: list[ServedTool] = []
        session: GuestSession | None = None
        try:
            for tooling in self.toolings:
                kept = self._listed.get(tooling)
                if kept is None:
                    session = session or self.session(audit_budget)
                    kept = self._list_tools(session, tooling)
                served += kept
        finally:
            if session is not None:
                session.close()
        return served

    def _list_tools(self, session: GuestSession, tooling: str) -> list[ServedTool]:
        """`tooling`'s tools as offered (asked through `session`), kept while its list is watched."""
        generation = self._generation.get(tooling, 0)
        try:
            specs = session.list_tools(session.get(tooling))
        except ToolingError as exc:
            logger.warning("the tools of tooling %s are not offered now: %s", tooling, exc)
            return []
        tools = [
            ServedTool(f"{tooling}.{s.name}", s.description, s.input_schema, s.output_schema, s.annotations, s.builtin)
            for s in specs
        ]
        if tooling in self._watched and self._generation.get(tooling, 0) == generation:
            self._listed[tooling] = tools
        return tools

    async def call(
        self,
        name: str,
        arguments: JsonObject,
        on_progress: AsyncProgressSink | None = None,
        *,
        audit_budget: AuditBudget | None = None,
    ) -> Answer:
        """Call the offered tool `name` (`route` gives it) with `arguments`; its progress reports go to
        `on_progress` while it runs, its audit lines are charged to `audit_budget` (the client's
        allowance). A refusal or failure is an `Answer` with its code. The call is one coroutine on
        the bridge loop (`SessionCore.call`); cancelling this one cancels it, upstream too."""
        route = self.route(name)
        assert route is not None, "the caller routes only offered tool names here"
        text = await off_loop.run(_text_of, arguments, size=off_loop.size_of(arguments))
        with Feed[Progress](PROGRESS_BUFFER, _report_cost) as reports:

            def push(progress: float, total: float | None, message: str | None) -> None:  # on the bridge loop
                reports.push(_cut(Progress(progress, total, message)))

            report = push if on_progress is not None else None
            async with anyio.create_task_group() as tg:
                if on_progress is not None:
                    tg.start_soon(reports.forward, on_progress)
                answer = await self._host.bridge.run(self._call, *route, text, report, audit_budget)
                reports.close()
        return answer

    async def _call(
        self, tooling: str, tool: str, arguments: str, report: ProgressFn | None, audit_budget: AuditBudget | None
    ) -> Answer:
        """On the bridge loop: one call, to its answer (audited as an asynchronous call, `call-tool`)."""
        caller = Caller(self._core.trail(audit_budget))
        try:
            connected = await self._core.connect(tooling, caller)
            outcome = await self._core.call(
                connected, tool, arguments, caller, operation=Operation.CALL_TOOL, on_progress=report
            )
        except ToolingError as exc:
            return Answer.of_error(exc)
        return await off_loop.run(_answer_of, outcome.value, size=len(outcome.value))

    # -- resources ---------------------------------------------------------------------------------

    async def resources(self, audit_budget: AuditBudget | None = None) -> list[ResourceSpec]:
        """The resources of the offered toolings that the grants let the client see; a URI listed by
        two toolings is the first one's. The audit lines charged to `audit_budget` (the client's)."""
        return await anyio.to_thread.run_sync(self._resources, audit_budget)

    def _resources(self, audit_budget: AuditBudget | None) -> list[ResourceSpec]:
        with closing(self.session(audit_budget)) as session:
            return self._list_resources(session)

    def _list_resources(self, session: GuestSession) -> list[ResourceSpec]:
        """The resources listed now; the owners are those of this listing (a tooling that cannot be
        listed keeps its last ones)."""
        listed: dict[str, ResourceSpec] = {}
        owners: dict[str, str] = {}
        for tooling in self.toolings:
            try:
                specs = session.list_resources(session.get(tooling))
            except ToolingError as exc:
                logger.warning("the resources of tooling %s are not offered now: %s", tooling, exc)
                owners.update((uri, owner) for uri, owner in self._owners.items() if owner == tooling)
                continue
            for spec in specs:
                if listed.setdefault(spec.uri, spec) is spec:
                    owners.setdefault(spec.uri, tooling)
        self._owners = owners
        return list(listed.values())

    async def read(self, uri: str, audit_budget: AuditBudget | None = None) -> ResourceData:
        """Resource `uri`, the audit lines charged to `audit_budget` (the client's allowance). Raises
        `ToolingError` (`not-found`, `denied`, `limit-exceeded`, ...)."""
        owner = self._known_owner(uri)
        if owner is None:
            owner = await anyio.to_thread.run_sync(self._owner, uri, audit_budget)
        return await self._host.bridge.run(self._read, owner, uri, audit_budget)

    async def _read(self, tooling: str, uri: str, audit_budget: AuditBudget | None) -> ResourceData:
        """On the bridge loop: resource `uri` of `tooling`."""
        caller = Caller(self._core.trail(audit_budget))
        return await self._core.read_resource(await self._core.connect(tooling, caller), uri, caller)

    def _owner(self, uri: str, audit_budget: AuditBudget | None) -> str:
        with closing(self.session(audit_budget)) as session:
            return self.owner(session, uri)

    def _known_owner(self, uri: str) -> str | None:
        """The owner of `uri` as last listed, else the one offered tooling; None: list again."""
        return self._owners.get(uri) or (self.toolings[0] if len(self.toolings) == 1 else None)

    def owner(self, session: GuestSession, uri: str) -> str:
        """The offered tooling resource `uri` belongs to (listing again when it is not known; with one
        offered tooling, that one). Raises `ToolingError(not-found)`."""
        owner = self._known_owner(uri)
        if owner is None:
            self._list_resources(session)
            owner = self._known_owner(uri)
        if owner is None:
            raise ToolingError(
                ErrorCode.NOT_FOUND,
                f"no offered tooling lists resource {uri!r} (offered: {', '.join(self.toolings) or 'none'})",
            )
        return owner

    def subscribable(self, session: GuestSession, uri: str) -> tuple[str, ToolingError | None]:
        """Where a subscription to resource `uri` goes: the offered tooling whose resource list (as
        the grants let the client see it) has `uri`, listing again when it is not known, and no
        refusal; else the first offered tooling whose grants allow `uri` (or the first one) and the
        `not-found` refusal (data `{"uri": uri}`) to raise once the grants are checked: only a listed
        resource may be subscribed to."""
        if uri not in self._owners:
            self._list_resources(session)
        owner = self._owners.get(uri)
        if owner is not None:
            return owner, None
        granting = [name for name in self.toolings if self.policy.grants.resource_allowed(name, uri)]
        refusal = ToolingError(
            ErrorCode.NOT_FOUND,
            f"no offered tooling lists resource {uri!r} (offered: {', '.join(self.toolings) or 'none'}); "
            "subscribe to a URI that resources/list gives",
            json.dumps({"uri": uri}),
        )
        return (granting or list(self.toolings))[0], refusal


def _answer_of(value: str) -> Answer:
    """The answer of a proxied call whose outcome is `value` (JSON text of a `CallToolResult`)."""
    return Answer.of_result(json.loads(value))


def _text_of(arguments: JsonObject) -> str:
    """The JSON text of a call's `arguments` (strict JSON already: `Catalog` checked them)."""
    return json.dumps(arguments, ensure_ascii=False)
