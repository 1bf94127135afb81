"""The config file as models: `Config` holds `[host]`, `[tooling.NAME]`, `[provider.NAME]` and
`[agents.NAME]` tables.

Each model checks its own keys and the rules that tie its keys together. The rules between tables
are checked where they are written, using the `Source` context: an agent may name only defined
toolings and providers, `[host] allow` globs must match a tooling, an allow-list needs its tooling
granted. A table's name and origin (`FILE [agents.NAME]`) come from its parent. `Config.source` is the file.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Final, Literal, Self

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from agent_host.config.base import At, Named, Need, Placed, Table, fail, problem, source_of
from agent_host.config.defaults import (
    DEFAULT_AUDIT_CLIENT_MAX,
    DEFAULT_AUDIT_CLIENT_RATE,
    DEFAULT_AUDIT_LOG_KEEP,
    DEFAULT_AUDIT_LOG_MAX,
    DEFAULT_AUDIT_RUN_MAX,
    DEFAULT_CPU_TIME,
    DEFAULT_GUEST_OUTPUT_MAX,
    DEFAULT_INBOX_SIZE,
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_OPEN_CALLS,
    DEFAULT_MAX_OPEN_FILES,
    DEFAULT_MAX_PENDING_BYTES,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_SUBSCRIPTIONS,
    DEFAULT_MEMORY,
    DEFAULT_RECV_TIMEOUT,
    DEFAULT_RUN_TIMEOUT,
    DEFAULT_SERVER_LOG_KEEP,
    DEFAULT_SERVER_LOG_MAX,
)
from agent_host.config.providers import GRANT_SEPARATOR, NetworkProviderConfig, ProviderConfig, grant_problems
from agent_host.config.toolings import ElicitationMode, HttpToolingConfig, StdioToolingConfig, ToolingConfig
from agent_host.config.types import (
    AgentName,
    Capability,
    Count,
    Executor,
    FilePath,
    Folder,
    Fraction,
    GuestPath,
    Json,
    RayAddress,
    Seconds,
    Size,
    Steps,
)

_NEEDS_BOTH = "needs `host` (a folder on this machine) and `guest` (its path in the guest)"


def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "(none)"


def _undefined(tooling: str, defined: Iterable[str]) -> At:
    hint = f"add a [tooling.{tooling}] table or remove it; defined: {_names(defined)}"
    return At((), f"names tooling {tooling!r}, which is not defined", hint, uses=(("toolings",), ("tools",)))


def _not_granted(key: str, tooling: str) -> At:
    hint = f'add "{tooling}" to the agent\'s `toolings`, or remove the allow-list'
    message = f"an allow-list for tooling {tooling!r}, which the agent is not granted"
    return At((key, tooling), message, hint, uses=(("toolings",), (key,)))


class DirGrant(Table):
    """One preopened directory of an agent: host folder, path inside the guest, writable or not."""

    needs = {"host": Need(_NEEDS_BOTH), "guest": Need(_NEEDS_BOTH)}
    example = '{ host = "./data", guest = "/data" }'

    host: Folder
    """A folder on this machine (relative to the config file)."""
    guest: GuestPath
    """Its absolute path inside the guest, such as "/data"."""
    writable: bool = Field(default=False, strict=True)
    """Whether the guest may write to it (read-only by default)."""


class AgentConfig(Named):
    """One `[agents.NAME]` table: a component, its input and its settings."""

    component: FilePath | None = None
    """A guest folder (built on demand) or a .wasm file (relative to the config file)."""
    code: Literal["python", "javascript"] | None = None
    """Instead of `component`: a code agent, whose input is a snippet in this language, run in a fresh
    sandbox with its granted toolings as functions of `toolings` (docs: code mode)."""
    description: str | None = None
    """What the agent does, for people and for MCP clients (`agent-host serve` offers it as a tool)."""
    input_schema: Json | None = None
    """JSON Schema of the object `agent-host serve` takes for this agent (it runs with that object as
    JSON text); absent: `{"input": string}`."""
    input: str | None = None
    """The input of its `run`."""
    toolings: tuple[str, ...] = ()
    """The toolings the agent may `get`; nothing else (deny by default)."""
    tools: Mapping[str, tuple[str, ...]] = {}
    """Per granted tooling, globs of the tool names it may see and call (absent: all)."""
    resources: Mapping[str, tuple[str, ...]] = {}
    """Per granted tooling, globs of the resource URIs it may see, read and watch (absent: all)."""
    memory: Size | None = None
    """Bytes of linear memory the guest may use ("256MiB"); absent: the [host] default."""
    cpu_time: Seconds | None = None
    """Seconds of CPU time for `run`; absent: the [host] default."""
    timeout: Seconds | None = None
    """Wall-clock seconds for `run`; absent: the [host] default."""
    dirs: tuple[DirGrant, ...] = ()
    """Directories preopened for the guest (read-only unless `writable`)."""
    max_open_files: Count | None = None
    """Host file descriptors the guest may hold through `dirs`; absent: the [host] default."""
    env: Mapping[str, str] = {}
    """Environment variables the guest sees (none by default)."""
    capabilities: tuple[Capability, ...] | None = None
    """The capabilities the agent holds; a call needing another is denied. Absent: not restricted."""
    require_approval: tuple[Capability, ...] = ()
    """Capabilities whose calls must be approved, one invocation at a time."""
    elicitation: Mapping[str, ElicitationMode] = {}
    """Per granted tooling, what its server's questions get during this agent's calls ("decline" or
    "ask"), instead of the tooling's `elicitation`."""
    restartable: bool = Field(default=False, strict=True)
    """With `--executor ray`: run the agent again (up to `[host] max_restarts` times) when its
    worker dies; only for agents whose tool calls are safe to repeat."""
    providers: tuple[str, ...] = ()
    """The model providers the agent may `get`, nothing else (deny by default): "NAME" (any model the
    provider allows) or "NAME:GLOB" (only its models matching GLOB)."""
    llm_requests: Count | None = None
    """Chats (blocking or streamed) one run may send to providers; absent: the [host] default."""
    llm_input_tokens: Count | None = None
    """Input tokens one run's chats may use, as the providers report them; absent: the [host] default."""
    llm_output_tokens: Count | None = None
    """Output tokens one run's chats may use (each chat's `max_tokens` is lowered to what is left);
    absent: the [host] default."""

    @model_validator(mode="after")
    def _grants_are_consistent(self, info: ValidationInfo) -> Self:
        defined = source_of(info).toolings
        named = dict.fromkeys((*self.toolings, *self.tools))
        problems = [_undefined(name, defined) for name in named if defined is not None and name not in defined]
        problems += grant_problems("providers", self.providers, source_of(info).providers)
        allow_lists = (("tools", self.tools), ("resources", self.resources), ("elicitation", self.elicitation))
        problems += [
            _not_granted(key, name) for key, lists in allow_lists for name in lists if name not in self.toolings
        ]
        if self.code is not None and self.component is not None:
            hint = "keep one: `component` runs that guest, `code` makes the agent's input a snippet"
            problems.append(
                At(("code",), "an agent has a `component` or `code`, not both", hint, uses=(("component",), ("code",)))
            )
        if problems:
            fail("AgentConfig", problems)
        return self

    @property
    def runs(self) -> bool:
        """Whether the table says what to run: a `component` or `code`."""
        return self.component is not None or self.code is not None


class HostSettings(Placed):
    """The `[host]` table: limits every guest of this host shares the defaults of."""

    inbox_size: Count = DEFAULT_INBOX_SIZE
    """Envelopes one guest's inbox holds; at least 2 * max_open_calls + max_subscriptions."""
    max_open_calls: Count = DEFAULT_MAX_OPEN_CALLS
    """Calls one guest may have open; `call-tool` answers `limit-exceeded` beyond."""
    max_subscriptions: Count = DEFAULT_MAX_SUBSCRIPTIONS
    """Subscriptions one guest may hold; `subscribe-*` answers `limit-exceeded` beyond."""
    recv_timeout: Seconds = DEFAULT_RECV_TIMEOUT
    """Seconds `inbox.recv` waits when the guest passes no timeout."""
    memory: Size = DEFAULT_MEMORY
    """Default memory limit of an agent ("256MiB" or bytes)."""
    cpu_time: Seconds = DEFAULT_CPU_TIME
    """Default CPU time limit of an agent's run, in seconds (time waiting in the host excluded)."""
    timeout: Seconds = DEFAULT_RUN_TIMEOUT
    """Default wall-clock limit of an agent's run, in seconds."""
    max_argument_bytes: Size = DEFAULT_MAX_ARGUMENT_BYTES
    """Largest tool arguments (JSON text) a guest may send."""
    max_result_bytes: Size = DEFAULT_MAX_RESULT_BYTES
    """Largest tool result or resource content a guest may receive."""
    max_open_files: Count = DEFAULT_MAX_OPEN_FILES
    """Host file descriptors one guest may hold through its granted folders (open files and folders,
    directory streams); beyond, the run is stopped (limit-exceeded)."""
    max_pending_bytes: Size = DEFAULT_MAX_PENDING_BYTES
    """Bytes the host holds for one guest (arguments of open calls, undelivered envelopes); `call-tool`
    and `subscribe-*` answer `limit-exceeded` beyond. At least 2 * max_argument_bytes."""
    audit_log: FilePath | None = None
    """JSON Lines file receiving one line per tooling operation (relative to the config file)."""
    audit_arguments: bool = Field(default=False, strict=True)
    """Whether audit lines include the arguments themselves (not only their size); the file is then
    created (or tightened to) mode 0600."""
    audit_log_max: Size = DEFAULT_AUDIT_LOG_MAX
    """Bytes of the audit log before it is rotated (renamed AUDIT.1, older ones shifted)."""
    audit_log_keep: Steps = DEFAULT_AUDIT_LOG_KEEP
    """Rotated audit logs kept (AUDIT.1 ... AUDIT.N); 0: the log is emptied when it is full."""
    audit_run_max: Size = DEFAULT_AUDIT_RUN_MAX
    """Bytes of audit lines one agent run (each call `agent-host serve` runs too) may write ("4MiB");
    beyond, its lines are counted, not written, and one line at the run's end says how many."""
    server_log_max: Size = DEFAULT_SERVER_LOG_MAX
    """Bytes of a stdio server's stderr log before it is rotated."""
    server_log_keep: Steps = DEFAULT_SERVER_LOG_KEEP
    """Rotated stderr logs kept per stdio server."""
    guest_output_max: Size = DEFAULT_GUEST_OUTPUT_MAX
    """Bytes of stdout, and as many of stderr, one guest run may write; beyond, its output is dropped."""
    allow: tuple[str, ...] = ()
    """Toolings (names or globs) granted to a guest run without an `[agents.NAME]` table, like `--allow`."""
    executor: Executor = "local"
    """Where `agent-host run` and `agent-host serve` run agents: "local" (threads of this process) or
    "ray" (Ray actors), like `--executor`."""
    ray_address: RayAddress | None = None
    """The Ray cluster of `executor = "ray"`: "auto" (the one `ray start` made on this machine) or
    HOST:PORT; absent: `RAY_ADDRESS` when set, else a local Ray started for the command. Like
    `--ray-address`."""
    ray_cpus: Fraction = 1.0
    """CPUs Ray reserves for each agent's worker (0.25: four agents per CPU); with `serve`, for each
    actor, which runs one call at a time."""
    max_restarts: Steps = 0
    """With `executor = "ray"`: times a `restartable` agent is run again after its worker died."""
    providers: tuple[str, ...] = ()
    """Model providers granted to a guest run without an `[agents.NAME]` table, like `allow` for
    toolings: "NAME" or "NAME:GLOB" (only its models matching GLOB)."""
    llm_requests: Count | None = None
    """Chats (blocking or streamed) one agent run may send to providers; beyond, `limit-exceeded`.
    Absent: unlimited. A served agent has it per call."""
    llm_input_tokens: Count | None = None
    """Input tokens one agent run's chats may use, counted from the usage the providers report; a chat
    asked for once they are spent answers `limit-exceeded`. Absent: unlimited."""
    llm_output_tokens: Count | None = None
    """Output tokens one agent run's chats may use: each chat's `max_tokens` is lowered to what is left,
    so that it cannot be exceeded; once spent, `limit-exceeded`. Absent: unlimited."""

    @model_validator(mode="after")
    def _limits_fit(self, info: ValidationInfo) -> Self:
        problems: list[At] = []
        needed = 2 * self.max_open_calls + self.max_subscriptions
        if self.inbox_size < needed:
            message = (
                f"{self.inbox_size} is too small: {self.max_open_calls} open calls (2 envelopes each) and "
                f"{self.max_subscriptions} subscriptions (1 each) need {needed}"
            )
            hint = "raise inbox_size or lower max_open_calls / max_subscriptions"
            inbox_uses = (("inbox_size",), ("max_open_calls",), ("max_subscriptions",))
            problems.append(At(("inbox_size",), message, hint=hint, value=self.inbox_size, uses=inbox_uses))
        if self.max_pending_bytes < 4 * self.max_argument_bytes:
            message = (
                f"{self.max_pending_bytes} is too small: one call of max_argument_bytes = {self.max_argument_bytes} "
                f"holds {2 * self.max_argument_bytes} (its text and parsed value), and calls are admitted only "
                "within half of max_pending_bytes (the other half is room for their results)"
            )
            hint = "raise max_pending_bytes or lower max_argument_bytes"
            pending_uses = (("max_pending_bytes",), ("max_argument_bytes",))
            problems.append(
                At(("max_pending_bytes",), message, hint=hint, value=self.max_pending_bytes, uses=pending_uses)
            )
        problems += grant_problems("providers", self.providers, source_of(info).providers)
        defined = source_of(info).toolings
        for index, pattern in enumerate(self.allow):
            if defined is not None and not any(fnmatch.fnmatchcase(name, pattern) for name in defined):
                hint = f"defined toolings: {_names(defined)}"
                problems.append(At(("allow", index), f"{pattern!r} matches no tooling", hint=hint, value=pattern))
        if problems:
            fail("HostSettings", problems)
        return self


LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts `agent-host serve` may bind without a token."""


def split_bind(address: str) -> tuple[str, int]:
    """`HOST:PORT` (an IPv6 host in brackets: `[::1]:8080`) as (host, port); `ValueError` otherwise."""
    host, sep, port = address.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT such as 127.0.0.1:8080, got {address!r}")
    return host, int(port)


ANY_HOST: Final = "*"
"""The `[serve] allowed_hosts` entry that accepts any `Host` header."""

_HOST_NAME: Final = re.compile(r"\[[0-9A-Fa-f:.*?]+\]|[A-Za-z0-9_.*?-]+")


def split_host_pattern(entry: str) -> tuple[str, str | None]:
    """A `Host` header value, or a `[serve] allowed_hosts` entry, as (name in lower case, port or None):
    `NAME`, `NAME:PORT`, an IPv6 address in brackets (`[::1]:8080`); in an entry, `*` and `?` glob the
    name and a port may be `*`. Raises `ValueError` for anything else."""
    name, port = entry, None
    if entry.startswith("["):
        name, _, rest = entry.partition("]")
        name += "]"
        if rest:
            port = rest[1:] if rest.startswith(":") else ""
    elif ":" in entry:
        name, _, port = entry.rpartition(":")
    if not _HOST_NAME.fullmatch(name) or (port is not None and port != "*" and not port.isdigit()):
        raise ValueError(f"expected NAME or NAME:PORT (an IPv6 address in brackets), got {entry!r}")
    return name.lower(), port


def bind_problem(address: str, tokens: Sequence[str]) -> str | None:
    """Why `agent-host serve` may not listen at `address` (HOST:PORT) with `tokens`: a bind beyond
    loopback needs a token. None when it may. Raises `ValueError` for an address that is not HOST:PORT."""
    host, _ = split_bind(address)
    if host not in LOOPBACK_HOSTS and not tokens:
        return f"binding {host} (beyond this machine) needs a token"
    return None


MAX_READY_INSTANCES: Final = 64
"""The most instances of one offered agent `[serve] ready_instances` may keep made ahead."""

SERVE_CLIENT: Final = "serve"
"""The agent a remote client of `agent-host serve` acts as (messages, the audit log, its grants)."""

GRANT_KEYS: Final = frozenset({"toolings", "tools", "resources", "capabilities", "require_approval", "elicitation"})
"""The keys of an `[agents.NAME]` table that `[serve] grants` takes (what a remote client may do)."""


TOKEN_HINT: Final = (
    'give each token a value without surrounding whitespace, e.g. tokens = ["${AGENT_HOST_TOKEN}"] with a '
    "generated value (or remove it)"
)
"""The hint of a token `[serve] tokens` refuses."""


class ServeSettings(Placed):
    """The `[serve]` table: what `agent-host serve` offers to MCP clients, and how."""

    agents: tuple[AgentName, ...] | None = None
    """The agents offered as tools (each `[agents.NAME]` with a `component`); absent: every such agent."""
    toolings: tuple[str, ...] = ()
    """Toolings re-exported to clients through the policy of `grants`: their tools as `TOOLING.TOOL`,
    their resources under their own URIs."""
    grants: AgentConfig | None = None
    """What a remote client may do with `toolings`, in the keys of an [agents.NAME] table (`toolings`,
    `tools`, `resources`, `capabilities`, `require_approval`); `toolings` defaults to [serve] toolings."""
    max_concurrent: Count = 8
    """Agent calls that run at once; more wait for one to end."""
    queue: Steps = 64
    """Agent calls that may wait for a turn; more are refused (HTTP 429, `limit-exceeded`)."""
    http: str = "127.0.0.1:8080"
    """Where `agent-host serve` listens for streamable HTTP: HOST:PORT (port 0: a free one)."""
    tokens: tuple[str, ...] = ()
    """Bearer tokens an HTTP client must present (use "${VAR}"); required to bind beyond loopback."""
    max_body: Size = 1024 * 1024
    """Largest HTTP request body accepted ("1MiB")."""
    grace: Seconds = 10.0
    """At SIGINT/SIGTERM, seconds HTTP calls in flight may take to finish before they are cancelled."""
    log_buffer: Size = 1024 * 1024
    """Bytes of one call's guest log lines waiting to reach a slow client ("1MiB"); more are dropped,
    with one "N log lines dropped" line in their place (the host's own log keeps them all)."""
    ready_instances: Annotated[Steps, Field(le=MAX_READY_INSTANCES)] = 2
    """Instances of each offered agent's component made ahead, never run, so that a call does not wait
    for its guest's instantiation (~9 ms of a componentize-py guest); each call still runs a fresh one.
    Each waiting instance holds its linear memory (~12 MiB for a componentize-py guest) and a temp
    folder. From 0 (none) to 64. The local executor's only: with `--executor ray`, each actor
    instantiates its call's guest."""
    max_sessions: Count = 256
    """MCP sessions (2025-11-25 over HTTP) open at once, for every client together; beyond, a new
    session is refused (HTTP 503, `limit-exceeded`). Open `subscriptions/listen` streams (2026-07-28)
    are bounded by the same number."""
    max_sessions_per_client: Count = 16
    """MCP sessions plus open `subscriptions/listen` streams one client may hold at once (a client: the
    token it presents with `tokens`, else its remote address); beyond, HTTP 429 `limit-exceeded`."""
    session_idle: Seconds = 300.0
    """Seconds an MCP session may go without a request in flight before it is closed (its id then
    answers 404 and its subscriptions end)."""
    listen_idle: Seconds = 300.0
    """Seconds a `subscriptions/listen` stream (2026-07-28) may carry no event before it is ended
    gracefully (the client re-listens), freeing its slot; a 2025-11-25 session's GET stream is closed
    after as many seconds open (the SDK's client opens it again), so that it cannot hold its session
    past `session_idle` for ever."""
    max_subscriptions_per_session: Count = 64
    """Resources one MCP session (or one `subscriptions/listen` stream) may be subscribed to at once."""
    audit_client_max: Size = DEFAULT_AUDIT_CLIENT_MAX
    """Bytes of audit lines one client may write at once ("4MiB"): its calls' lines, their agents'
    runs and proxied operations included; beyond, they are counted, not written, until its allowance
    refills (`audit_client_rate`), and one line then says how many."""
    audit_client_rate: Size = DEFAULT_AUDIT_CLIENT_RATE
    """Bytes per second by which a client's audit allowance (`audit_client_max`) refills ("4KiB")."""
    max_connections: Count = 512
    """HTTP connections open at once; more are refused at once (503 `limit-exceeded`, the request
    unread). Lowered at start to fit the open-file limit (ulimit -n), which must leave room besides."""
    max_connections_per_client: Count = 64
    """HTTP connections one client may have open at once (nothing of a request is read yet, so not its
    token: its IPv4 address, its IPv6 /64, every loopback address the one client `loopback`, as for
    sessions); more are refused at once (429 `limit-exceeded`, the request unread). Below
    `max_connections`, so that one client's sockets cannot take them all."""
    send_timeout: Seconds = 30.0
    """Seconds the server may have unsent answer data for a connection without any of it being read;
    then the connection is aborted (a client that never reads its answers)."""
    min_send_rate: Size = 8 * 1024
    """Bytes per second a client must read while more than 64 KiB waits for it ("8KiB"): less over a
    `send_timeout` window aborts the connection (a client reading a byte now and then, which
    `send_timeout` alone never ends, held its whole answer in the server's memory)."""
    max_pending_answers: Size = 256 * 1024 * 1024
    """Bytes of answers waiting in the server's buffers for their clients, every connection together
    ("256MiB"): an answer of more than 64 KiB that would take them over is refused before any of it is
    sent (503 `limit-exceeded`); an event of a stream already under way, its connection aborted."""
    idle_timeout: Seconds = 5.0
    """Seconds an HTTP connection may stay open with no request under way (before its first request,
    between requests); then it is closed."""
    header_timeout: Seconds = 10.0
    """Seconds from a request's first byte until its request line and headers have all arrived; then
    the connection is closed (408)."""
    body_timeout: Seconds = 30.0
    """Seconds from the end of a request's headers until its whole body has arrived; then the
    connection is closed (408)."""
    allowed_hosts: tuple[str, ...] | None = None
    """`Host` header values the HTTP server answers besides the loopback names: "NAME" (any port),
    "NAME:PORT", globs such as "*.example.com"; "*": any (only with tokens). Absent: the loopback names
    for a loopback bind, any Host for a bind beyond loopback (which needs tokens)."""

    @field_validator("session_idle", "listen_idle")
    @classmethod
    def _finite(cls, value: float, info: ValidationInfo) -> float:
        if not math.isfinite(value):
            raise problem(f"expected a finite number of seconds, got {value!r}", f"for example {info.field_name} = 300")
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _are_host_patterns(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for entry in value or ():
            try:
                split_host_pattern(entry)
            except ValueError as exc:
                raise problem(str(exc), 'for example allowed_hosts = ["agents.example.com", "10.0.0.5:8080"]') from None
        return value

    @field_validator("http")
    @classmethod
    def _is_host_port(cls, value: str) -> str:
        try:
            split_bind(value)
        except ValueError as exc:
            raise problem(str(exc), 'for example http = "127.0.0.1:8080"') from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _grant_offered_toolings(cls, data: object) -> object:
        """`grants.toolings` defaults to the offered toolings (before validation, so that allow-lists
        in `grants` can name them)."""
        if isinstance(data, dict) and isinstance(data.get("grants"), dict) and "toolings" not in data["grants"]:
            return {**data, "grants": {**data["grants"], "toolings": data.get("toolings", ())}}
        return data

    @model_validator(mode="after")
    def _toolings_offered_with_grants(self, info: ValidationInfo) -> Self:
        defined = source_of(info).toolings
        problems = []
        for index, name in enumerate(self.toolings):
            if "." in name:
                hint = "its tools are offered as TOOLING.TOOL: rename the [tooling] table without '.'"
                message = f"tooling {name!r} cannot be offered: its name has a '.'"
                problems.append(At(("toolings", index), message, hint))
            elif defined is not None and name not in defined:
                undefined = _undefined(name, defined)
                problems.append(At(("toolings", index), undefined.message, undefined.hint, uses=(("toolings",),)))
            elif self.grants is not None and name not in self.grants.toolings:
                hint = f'add "{name}" to [serve] grants.toolings (or leave `toolings` out of grants)'
                message = f"tooling {name!r} is offered but not granted"
                problems.append(At(("toolings", index), message, hint, uses=(("toolings",), ("grants",))))
        if self.grants is not None:
            for key in sorted(self.grants.model_fields_set - GRANT_KEYS):
                hint = f"[serve] grants takes {', '.join(sorted(GRANT_KEYS))}: what a remote client may do"
                problems.append(At(("grants", key), "not a grant (it configures a guest)", hint))
        if problems:
            fail("ServeSettings", problems)
        return self

    def client_grants(self) -> AgentConfig:
        """The grants of the remote client (agent `serve`) as an agent table placed at `[serve] grants`."""
        grants = self.grants if self.grants is not None else AgentConfig(toolings=self.toolings)
        return grants.named(SERVE_CLIENT, f"{self.origin} grants")

    @model_validator(mode="after")
    def _tokens_beyond_loopback(self) -> Self:
        problem = bind_problem(self.http, self.tokens)
        if problem is not None:
            hint = 'set `tokens = ["${AGENT_HOST_TOKEN}"]` in [serve], or bind 127.0.0.1'
            fail("ServeSettings", [At(("http",), problem, hint, self.http, uses=(("http",), ("tokens",)))])
        if not self.tokens and ANY_HOST in (self.allowed_hosts or ()):
            hint = 'name the hosts (allowed_hosts = ["agents.example.com"]), or set tokens = ["${AGENT_HOST_TOKEN}"]'
            message = 'accepting any Host ("*") without a token opens the server to DNS rebinding'
            fail("ServeSettings", [At(("allowed_hosts",), message, hint, uses=(("allowed_hosts",), ("tokens",)))])
        if self.max_connections_per_client >= self.max_connections > 1:
            hint = f"set max_connections_per_client below {self.max_connections} (or raise max_connections)"
            message = (
                f"max_connections_per_client ({self.max_connections_per_client}) must be below max_connections "
                f"({self.max_connections}): one client could take every connection"
            )
            uses = (("max_connections_per_client",), ("max_connections",))
            fail("ServeSettings", [At(("max_connections_per_client",), message, hint, uses=uses)])
        problems = []
        for index, token in enumerate(self.tokens):  # never quoted: a token is a secret
            if not token.strip():
                problems.append(At(("tokens", index), "a blank token (empty or only whitespace)", TOKEN_HINT))
            elif token != token.strip():
                message = "a token with spaces around it (a client cannot send them: a header's value is trimmed)"
                problems.append(At(("tokens", index), message, TOKEN_HINT))
        if problems:
            fail("ServeSettings", problems)
        return self


class Config(Table):
    """A whole, validated configuration: the model of the file."""

    host: HostSettings = Field(default_factory=HostSettings, validate_default=True)
    """Limits and defaults shared by every guest of this host."""
    tooling: Mapping[str, ToolingConfig] = {}
    """The named toolings: a guest reaches one with tooling.get("NAME")."""
    provider: Mapping[str, ProviderConfig] = {}
    """The named model providers: a guest reaches one with provider.get("NAME"), if it is granted."""
    agents: Mapping[AgentName, AgentConfig] = {}
    """The named agents: run one with `agent-host run --agent NAME`."""
    serve: ServeSettings = Field(default_factory=ServeSettings, validate_default=True)
    """What `agent-host serve` offers to MCP clients."""

    _source: Path | None = PrivateAttr(default=None)
    _secrets: frozenset[str] = PrivateAttr(default=frozenset())

    @property
    def secrets(self) -> frozenset[str]:
        """The values the file took from the environment (`${VAR}`), and every provider's `api_key`
        however it was written: never written where others read (a cassette replaces them,
        `session.cassette`)."""
        keys = {p.api_key for p in self.provider.values() if isinstance(p, NetworkProviderConfig) and p.api_key}
        return self._secrets | keys

    def with_secrets(self, secrets: frozenset[str]) -> Config:
        """This configuration, knowing `secrets` (what `parse_config` expanded from the environment)."""
        self._secrets = secrets
        return self

    @property
    def toolings(self) -> Mapping[str, ToolingConfig]:
        """The `[tooling.NAME]` tables by name."""
        return self.tooling

    @property
    def providers(self) -> Mapping[str, ProviderConfig]:
        """The `[provider.NAME]` tables by name."""
        return self.provider

    @property
    def source(self) -> Path | None:
        """The file it was read from; None for the embedded default."""
        return self._source

    def describe_source(self) -> str:
        """The file, or "the embedded default configuration", as messages name it."""
        return str(self.source) if self.source is not None else "the embedded default configuration"

    @field_validator("host")
    @classmethod
    def _place_host(cls, host: HostSettings, info: ValidationInfo) -> HostSettings:
        return host.placed(f"{source_of(info).where()} [host]")

    @field_validator("tooling")
    @classmethod
    def _name_toolings(cls, toolings: Mapping[str, ToolingConfig], info: ValidationInfo) -> dict[str, ToolingConfig]:
        source = source_of(info)
        named = {name: tooling.named(name, f"{source.where()} [tooling.{name}]") for name, tooling in toolings.items()}
        for name, tooling in named.items():
            if isinstance(tooling, HttpToolingConfig):
                named[name] = tooling.written_as(source.as_written("tooling", name, "url"))
            elif isinstance(tooling, StdioToolingConfig):
                written = (source.as_written("tooling", name, "command"), source.as_written("tooling", name, "cwd"))
                named[name] = tooling.written_as(*written)
        return named

    @field_validator("provider")
    @classmethod
    def _name_providers(
        cls, providers: Mapping[str, ProviderConfig], info: ValidationInfo
    ) -> dict[str, ProviderConfig]:
        where = source_of(info).where()
        return {name: provider.named(name, f"{where} [provider.{name}]") for name, provider in providers.items()}

    @field_validator("agents")
    @classmethod
    def _name_agents(cls, agents: Mapping[str, AgentConfig], info: ValidationInfo) -> dict[str, AgentConfig]:
        where = source_of(info).where()
        return {name: agent.named(name, f"{where} [agents.{name}]") for name, agent in agents.items()}

    @field_validator("serve")
    @classmethod
    def _place_serve(cls, serve: ServeSettings, info: ValidationInfo) -> ServeSettings:
        return serve.placed(f"{source_of(info).where()} [serve]")

    @model_validator(mode="after")
    def _served_agents_exist(self) -> Self:
        problems = []
        for index, name in enumerate(self.serve.agents or ()):
            agent, uses = self.agents.get(name), (("serve", "agents"), ("agents", name))
            if agent is None:
                hint = f"add an [agents.{name}] table or remove it; defined agents: {_names(self.agents)}"
                message = f"names agent {name!r}, which is not defined"
                problems.append(At(("serve", "agents", index), message, hint, uses=uses))
            elif not agent.runs:
                hint = f'give [agents.{name}] a `component` (a guest folder or a .wasm file) or `code = "python"`'
                message = f"agent {name!r} has no `component` and no `code`"
                problems.append(At(("serve", "agents", index), message, hint, uses=uses))
        if problems:
            fail("Config", problems)
        return self

    @model_validator(mode="after")
    def _provider_names_are_grantable(self) -> Self:
        problems = []
        for name in self.provider:
            if GRANT_SEPARATOR in name or not name:
                hint = f"rename the table without {GRANT_SEPARATOR!r}: grants write NAME:GLOB (a glob of its models)"
                problems.append(At(("provider", name), f"a provider cannot be named {name!r}", hint))
        if problems:
            fail("Config", problems)
        return self

    @model_validator(mode="after")
    def _remember_source(self, info: ValidationInfo) -> Self:
        self._source = source_of(info).file
        return self
