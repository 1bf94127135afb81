"""The `[tooling.NAME]` tables: one model per kind and transport, chosen by a discriminator.

`kind` picks the model: "mcp" (the default), "python" or "mock". For "mcp", `transport` picks
between stdio (the default when `command` is set) and streamable HTTP (the default when only `url`
is set). So an HTTP tooling has no `command` and a stdio one has no `url`: whoever reads a tooling
narrows on `kind` / `transport` and never checks which fields are set. Keys that belong to the other
transport are refused, and the message names the transport they belong to. Python and mock toolings
connect at once: their `connect_timeout` is the default and is not a key of their table.
`MemoryToolingConfig` (an MCP server object of this process) is built in code only: no table of
the file selects it, so the file's schema does not know it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import ConfigDict, Discriminator, Field, PrivateAttr, Tag, ValidationInfo, model_validator

from agent_host.config.auth import AuthConfig
from agent_host.config.base import TAG_ERROR, At, Named, Need, Table, fail, source_of
from agent_host.config.defaults import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MAX_CALL_TIME,
    DEFAULT_REQUEST_TIMEOUT,
)
from agent_host.config.mock import MockSpec
from agent_host.config.types import Capability, FilePath, HttpUrl, ModuleSpec, Sampling, Seconds

ToolingKind = Literal["mcp", "python", "mock"]
Transport = Literal["stdio", "http"]
Protocol = Literal["auto", "2025-11-25"]
ElicitationMode = Literal["decline", "ask", "guest"]

KINDS: Final = ("mcp", "python", "mock")
_HTTP_ONLY: Final = '`url` and `headers` apply only to transport = "http"'
_STDIO_ONLY: Final = 'applies only to transport = "stdio"'


class _Tooling(Named):
    """What every kind of tooling has."""

    timeout: Seconds = DEFAULT_REQUEST_TIMEOUT
    """Seconds per request; the request is cancelled after it (for an asynchronous tool call: after
    that long without progress, see `progress_resets_timeout`)."""
    progress_resets_timeout: bool = Field(default=True, strict=True)
    """Whether a progress report of an asynchronous tool call (`call-tool`) starts its `timeout` anew."""
    max_call_time: Seconds = DEFAULT_MAX_CALL_TIME
    """Seconds an asynchronous tool call may take in all, however often it reports progress."""
    capabilities: Mapping[str, tuple[Capability, ...]] = {}
    """Tool-name glob → the capabilities its calls need (first match wins); overrides what tools say."""
    pin_tools: bool = Field(default=False, strict=True)
    """Whether each tool's definition is pinned in `agent-host.lock` beside the config (at first sight,
    or by `agent-host tools --pin`); a changed or new tool is then denied until re-pinned."""


class SamplingProvider(Table):
    """`sampling = { provider = "NAME" }`: a server's sampling requests answered by a configured
    provider, each charged to the budget of the agent whose call it came during."""

    example: ClassVar[str | None] = '{ provider = "llm", model = "gpt-4.1-mini" }'

    provider: str
    """The `[provider.NAME]` that answers."""
    model: str | None = None
    """The model asked (within the provider's `models`); absent: the provider's default. The
    request's model preferences are hints only (MCP) and are not followed."""

    @model_validator(mode="after")
    def _provider_is_defined(self, info: ValidationInfo) -> Self:
        defined = source_of(info).providers
        if defined is not None and self.provider not in defined:
            names = ", ".join(sorted(defined)) or "(none)"
            hint = f"add a [provider.{self.provider}] table or name another; defined: {names}"
            message = f"names provider {self.provider!r}, which is not defined"
            fail("SamplingProvider", [At(("provider",), message, hint, self.provider)])
        return self


def _sampling_kind(value: object) -> str:
    return "provider" if isinstance(value, Mapping | SamplingProvider) else "hook"


SamplingAnswer = Annotated[
    Annotated[Sampling, Tag("hook")] | Annotated[SamplingProvider, Tag("provider")], Discriminator(_sampling_kind)
]
"""`sampling`: "decline", a hook "module:function", or a provider table."""


class _McpTooling(_Tooling):
    """What an MCP server has, whatever its transport."""

    kind: Literal["mcp"] = "mcp"
    """An MCP server."""
    connect_timeout: Seconds = DEFAULT_CONNECT_TIMEOUT
    """Seconds to start (or reach) the server and complete the MCP handshake."""
    protocol: Protocol = "auto"
    """MCP protocol era: "auto" (discover, fall back to the 2025 handshake) or "2025-11-25" (handshake only)."""
    max_backoff: Seconds = DEFAULT_MAX_BACKOFF
    """Cap, in seconds, of the exponential backoff between attempts to reach a failing server."""
    elicitation: ElicitationMode = "decline"
    """What the server's questions (form elicitation) get: "decline", "ask" the host's approver (the
    terminal with `--approve ask`), or "guest" (an `elicitation` event for the guest whose call it came
    during, answered with `respond`); an agent may override it (`[agents.NAME] elicitation`)."""
    sampling: SamplingAnswer = "decline"
    """What the server's requests for model output (sampling) get: "decline" (an error), the answer
    of a Python function "module:function" (sync or async) taking the request and returning the
    result, or `{ provider = "NAME" }`: a configured provider's, charged to the calling agent's budget."""


class StdioToolingConfig(_McpTooling):
    """An MCP server started as a child process, spoken to over stdin/stdout."""

    needs = {"command": Need("a stdio tooling needs `command`", hint='e.g. command = "npx"')}
    elsewhere = {"url": _HTTP_ONLY, "headers": _HTTP_ONLY, "auth": '`auth` applies only to transport = "http"'}

    transport: Literal["stdio"] = "stdio"
    """A child process (the default when `command` is set)."""
    command: str
    """The program to start."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] = {}
    """Variables added to a minimal environment (HOME, PATH, USER, ...), not the host's."""
    cwd: FilePath | None = None
    """Its working folder (relative to the config file)."""

    _written: tuple[object, object] = PrivateAttr(default=(None, None))

    @property
    def shown_command(self) -> str:
        """`command` as messages quote it: as the file writes it, and what it expanded to when that
        differs (`'${SERVER}' (expanded to '/opt/server')`; a command is not a secret)."""
        return _shown(self._written[0], self.command)

    @property
    def shown_cwd(self) -> str | None:
        """`cwd` as messages quote it (see `shown_command`); None when it is not set."""
        return _shown(self._written[1], str(self.cwd)) if self.cwd is not None else None

    def written_as(self, command: object, cwd: object) -> StdioToolingConfig:
        """A copy whose `shown_command` / `shown_cwd` quote `command` / `cwd` (the raw values of the file)."""
        copy = self.model_copy()
        copy._written = (command, cwd)
        return copy


def _shown(written: object, value: str) -> str:
    """`value` quoted, after the text of the file that made it when it was expanded from `${...}`."""
    if not isinstance(written, str) or "$" not in written or written == value:
        return repr(value)
    return f"{written!r} (expanded to {value!r})"


class HttpToolingConfig(_McpTooling):
    """An MCP server reached over streamable HTTP."""

    needs = {"url": Need('transport = "http" needs `url`', hint='e.g. url = "http://127.0.0.1:8000/mcp"')}
    elsewhere = {"command": _STDIO_ONLY, "args": _STDIO_ONLY, "env": _STDIO_ONLY, "cwd": _STDIO_ONLY}

    transport: Literal["http"] = "http"
    """Streamable HTTP (the default when only `url` is set)."""
    url: HttpUrl
    """The MCP endpoint."""
    headers: Mapping[str, str] = {}
    """HTTP headers sent with every request (values may use ${VAR})."""
    auth: AuthConfig | None = None
    """OAuth: `{ type = "oauth", ... }` or `{ type = "client_credentials", ... }` (see `config.auth`)."""

    _written_url: str | None = PrivateAttr(default=None)

    @property
    def shown_url(self) -> str:
        """`url` as the file writes it (`${VAR}` unexpanded): what messages name, since guests and
        remote clients read them and a variable may hold a secret (`?key=${KEY}`)."""
        return self._written_url if self._written_url is not None else self.url

    def written_as(self, url: object) -> HttpToolingConfig:
        """A copy whose `shown_url` is `url` (when it is a string: the raw value of the file)."""
        copy = self.model_copy()
        copy._written_url = url if isinstance(url, str) else None
        return copy


class MemoryToolingConfig(_McpTooling):
    """An MCP SDK server object of this process (`MCPServer` or low-level `Server`), spoken to in
    process with no subprocess (the SDK's `Client(server)`). Built in code (the pytest plugin,
    `agent_host.testing`), never read from a file: `transport = "memory"` is refused in a `[tooling.NAME]`
    table."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    transport: Literal["memory"] = "memory"
    """In process, over memory streams."""
    server: object
    """The server object (typed loosely: this package never imports the MCP SDK)."""


class PythonToolingConfig(_Tooling):
    """Host-native Python tools."""

    needs = {"tools": Need('a python tooling needs tools = ["module:attribute", ...]', at_table=False)}

    kind: Literal["python"]
    """Host-native Python tools."""
    tools: tuple[ModuleSpec, ...] = Field(min_length=1)
    """Import paths of the tools: "module" or "module:attribute"."""
    path: tuple[FilePath, ...] = ()
    """Folders put in front of `sys.path` before importing (relative to the config file)."""
    connect_timeout: ClassVar[float] = DEFAULT_CONNECT_TIMEOUT


class MockToolingConfig(_Tooling, MockSpec):
    """A scripted tooling, for tests without a server (see `agent_host.config.mock`)."""

    kind: Literal["mock"]
    """Tools, resources and changes scripted in this table."""
    connect_timeout: ClassVar[float] = DEFAULT_CONNECT_TIMEOUT

    @property
    def mock(self) -> MockSpec:
        """The script: this table's tools, resources and updates."""
        return self


def _raw(value: Any, key: str, default: str) -> str:
    """The tag `value` (a raw table or a model) gives under `key`, as text."""
    found: object = value.get(key, default) if isinstance(value, dict) else getattr(value, key, default)
    return found if isinstance(found, str) else repr(found)


def _kind_of(value: Any) -> str | None:
    """The `kind` of a tooling table; None when it is not a table."""
    return _raw(value, "kind", "mcp") if isinstance(value, dict | _Tooling) else None


def _transport_of(value: Any) -> str | None:
    """The `transport` of an MCP tooling table: stdio, unless only `url` is set."""
    if not isinstance(value, dict | _Tooling):
        return None
    http = isinstance(value, dict) and "url" in value and "command" not in value
    return _raw(value, "transport", "http" if http else "stdio")


McpToolingConfig = Annotated[
    Annotated[StdioToolingConfig, Tag("stdio")] | Annotated[HttpToolingConfig, Tag("http")],
    Discriminator(_transport_of, custom_error_type=f"{TAG_ERROR}transport", custom_error_message='"stdio" or "http"'),
]
"""An MCP server: stdio or HTTP, by `transport`."""

McpServerConfig = StdioToolingConfig | HttpToolingConfig | MemoryToolingConfig
"""What an MCP connection is made from: a configured MCP server, or a server object built in code."""

ToolingConfig = Annotated[
    Annotated[McpToolingConfig, Tag("mcp")]
    | Annotated[PythonToolingConfig, Tag("python")]
    | Annotated[MockToolingConfig, Tag("mock")],
    Discriminator(_kind_of, custom_error_type=f"{TAG_ERROR}kind", custom_error_message=f"one of {', '.join(KINDS)}"),
]
"""One `[tooling.NAME]` table: its model by `kind` (and, for MCP, `transport`)."""
