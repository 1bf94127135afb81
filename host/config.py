"""Configuration: TOML (read with `tomllib`) into frozen dataclasses, validated at load.

Where the configuration comes from, first match wins: `--config FILE`, the `AGENT_HOST_CONFIG`
environment variable, `./agent-host.toml`, else the embedded default (tooling `demo`: the MCP
server bundled in `host.demo_server`, started with the host's own Python over stdio).

Contract:
- Unknown tables and keys are errors, named by their dotted path (`tooling.files.comand`).
- Every error is a `ConfigError` naming the file, the key path, what was found and what is
  expected. Nothing is half-loaded: either a whole `Config` comes back or an error is raised.
- `${VAR}` and `${VAR:-default}` in string values are expanded from the host's environment at
  load; an unset variable without a default is an error naming the key. `$$` is a literal `$`.
  `${AGENT_HOST_PYTHON}` is always defined: the interpreter running the host.
- Relative paths (`cwd`, `component`) are resolved against the config file's folder.

This module imports nothing of the host but `errors`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import tomli_w

from host.errors import ConfigError
from host.mock_config import MockSpec, parse_mock

DEFAULT_FILE_NAME: Final = "agent-host.toml"
"""Looked up in the current folder when neither `--config` nor `AGENT_HOST_CONFIG` is given."""

ENV_CONFIG: Final = "AGENT_HOST_CONFIG"
"""Environment variable naming the config file."""

DEFAULT_REQUEST_TIMEOUT: Final = 30.0
"""Seconds a tooling request may take before it is cancelled."""

DEFAULT_CONNECT_TIMEOUT: Final = 30.0
"""Seconds to start (or reach) a server and complete the MCP handshake."""

DEFAULT_MAX_BACKOFF: Final = 10.0
"""Longest wait, in seconds, between attempts to reach a server that keeps failing."""

DEFAULT_MEMORY: Final = 256 * 1024 * 1024
"""Bytes of linear memory a guest may use (a componentize-py guest needs ~13 MiB to start)."""

DEFAULT_CPU_TIME: Final = 60.0
"""Seconds of CPU time (time running wasm, not waiting in the host) a guest's `run` may use."""

DEFAULT_RUN_TIMEOUT: Final = 300.0
"""Wall-clock seconds a guest's `run` may take, waits included."""

DEFAULT_MAX_ARGUMENT_BYTES: Final = 1024 * 1024
"""Bytes of tool arguments (JSON text) one call may send."""

DEFAULT_MAX_RESULT_BYTES: Final = 16 * 1024 * 1024
"""Bytes of one tool result (JSON) or resource content a guest may receive."""

DEFAULT_INBOX_SIZE: Final = 1024
DEFAULT_MAX_OPEN_CALLS: Final = 256
DEFAULT_MAX_SUBSCRIPTIONS: Final = 256
DEFAULT_RECV_TIMEOUT: Final = 60.0

PYTHON_VARIABLE: Final = "AGENT_HOST_PYTHON"
"""Always-defined variable for `${...}` expansion: the Python interpreter running the host."""

ToolingKind = Literal["mcp", "python", "mock"]
Transport = Literal["stdio", "http"]
Protocol = Literal["auto", "2025-11-25"]

_TOP_KEYS: Final = frozenset({"host", "tooling", "agents"})
_HOST_KEYS: Final = frozenset(
    {
        "inbox_size", "max_open_calls", "max_subscriptions", "recv_timeout", "memory", "cpu_time", "timeout",
        "max_argument_bytes", "max_result_bytes", "audit_log", "audit_arguments", "allow",
    }
)  # fmt: skip
_COMMON_TOOLING_KEYS: Final = frozenset({"kind", "timeout", "capabilities"})
_KIND_KEYS: Final = {
    "mcp": frozenset(
        {"transport", "command", "args", "env", "cwd", "url", "headers", "connect_timeout", "protocol", "max_backoff"}
    ),
    "python": frozenset({"tools", "path"}),
    "mock": frozenset({"tools", "resources", "updates"}),
}
_AGENT_KEYS: Final = frozenset(
    {
        "component", "input", "toolings", "tools", "resources", "memory", "cpu_time", "timeout", "dirs", "env",
        "capabilities", "require_approval",
    }
)  # fmt: skip
CAPABILITIES: Final = frozenset(
    {"read_only", "network", "workspace_write", "process_execute", "external_side_effect", "agent_delegate"}
)
"""What a tool call may need (see `host.capabilities`)."""
_DIR_KEYS: Final = frozenset({"host", "guest", "writable"})

NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
NAME_RULE: Final = "letters, digits, '-' and '_', starting with a letter or digit"
"""What an agent name (and so a guest folder made by `agent-host new`) may be."""


def name_problem(name: str) -> str | None:
    """Why `name` is not a valid agent name, or None when it is."""
    if NAME_PATTERN.fullmatch(name):
        return None
    return f"{name!r} is not a valid agent name: use only {NAME_RULE}"


_KINDS: Final = ("mcp", "python", "mock")


@dataclass(frozen=True)
class ToolingConfig:
    """One `[tooling.NAME]` table."""

    name: str
    kind: ToolingKind = "mcp"
    transport: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_REQUEST_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    protocol: Protocol = "auto"
    """MCP protocol era: "auto" (discover, fall back to the 2025 handshake) or "2025-11-25" (handshake only)."""
    max_backoff: float = DEFAULT_MAX_BACKOFF
    """Cap, in seconds, of the exponential backoff between attempts to reach a failing server."""
    capabilities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tool-name glob → the capabilities its calls need (first match wins); overrides what tools say."""
    tools: tuple[str, ...] = ()
    """kind = "python": import paths `module:attribute` of the tools."""
    path: tuple[Path, ...] = ()
    """kind = "python": folders put in front of `sys.path` before importing."""
    mock: MockSpec = field(default_factory=MockSpec)
    """kind = "mock": the scripted tools, resources and updates."""
    origin: str = "<default>"
    """Where this table was defined, for messages: `FILE [tooling.NAME]`."""


@dataclass(frozen=True)
class DirGrant:
    """One preopened directory of an agent: host folder, path inside the guest, writable or not."""

    host: Path
    guest: str
    writable: bool = False


@dataclass(frozen=True)
class AgentConfig:
    """One `[agents.NAME]` table: a component, its input and its settings."""

    name: str
    component: Path | None = None
    input: str | None = None
    toolings: tuple[str, ...] = ()
    """The toolings the agent may `get`; nothing else (deny by default)."""
    tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per granted tooling, globs of the tool names it may see and call (absent: all)."""
    resources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per granted tooling, globs of the resource URIs it may see, read and watch (absent: all)."""
    memory: int | None = None
    """Bytes of linear memory the guest may use; None for the host default."""
    cpu_time: float | None = None
    """Seconds of CPU time for `run`; None for the host default."""
    timeout: float | None = None
    """Wall-clock seconds for `run`; None for the host default."""
    dirs: tuple[DirGrant, ...] = ()
    """Directories preopened for the guest (read-only unless `writable`)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables the guest sees (none by default)."""
    capabilities: tuple[str, ...] | None = None
    """The capabilities the agent holds; a call needing another is denied. None: not restricted."""
    require_approval: tuple[str, ...] = ()
    """Capabilities whose calls must be approved, one invocation at a time."""
    origin: str = "<default>"


@dataclass(frozen=True)
class HostSettings:
    """The `[host]` table: limits every guest of this host shares the defaults of."""

    inbox_size: int = DEFAULT_INBOX_SIZE
    """Envelopes one guest's inbox holds; at least 2 * max_open_calls + max_subscriptions."""
    max_open_calls: int = DEFAULT_MAX_OPEN_CALLS
    """Calls one guest may have open; `call-tool` answers `limit-exceeded` beyond."""
    max_subscriptions: int = DEFAULT_MAX_SUBSCRIPTIONS
    """Subscriptions one guest may hold; `subscribe-*` answers `limit-exceeded` beyond."""
    recv_timeout: float = DEFAULT_RECV_TIMEOUT
    """Seconds `inbox.recv` waits when the guest passes no timeout."""
    memory: int = DEFAULT_MEMORY
    """Default memory limit of an agent, in bytes."""
    cpu_time: float = DEFAULT_CPU_TIME
    """Default CPU time limit of an agent's run, in seconds."""
    timeout: float = DEFAULT_RUN_TIMEOUT
    """Default wall-clock limit of an agent's run, in seconds."""
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    audit_log: Path | None = None
    """JSON Lines file receiving one line per tooling operation; None: no audit log."""
    audit_arguments: bool = False
    """Whether audit lines include the arguments themselves (not only their size)."""
    allow: tuple[str, ...] = ()
    """Toolings (names or globs) granted to a guest run without an `[agents.NAME]` table, like `--allow`."""
    origin: str = "<default>"


@dataclass(frozen=True)
class Config:
    """A whole, validated configuration."""

    toolings: Mapping[str, ToolingConfig]
    agents: Mapping[str, AgentConfig] = field(default_factory=dict)
    host: HostSettings = field(default_factory=HostSettings)
    source: Path | None = None
    """The file it was read from; None for the embedded default."""

    def describe_source(self) -> str:
        return str(self.source) if self.source is not None else "the embedded default configuration"


def default_config() -> Config:
    """The embedded default: tooling `demo`, the bundled MCP server over stdio."""
    demo = ToolingConfig(
        name="demo",
        command=sys.executable,
        args=("-m", "host.demo_server"),
        origin="embedded default [tooling.demo]",
    )
    return Config(toolings={"demo": demo})


def find_config_file(explicit: str | None, cwd: Path | None = None) -> Path | None:
    """The config file to use, or None for the embedded default."""
    if explicit:
        return Path(explicit)
    from_env = os.environ.get(ENV_CONFIG)
    if from_env:
        return Path(from_env)
    candidate = (cwd or Path.cwd()) / DEFAULT_FILE_NAME
    return candidate if candidate.is_file() else None


def load_config(path: Path | None, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate `path`, or return the embedded default when `path` is None."""
    if path is None:
        return default_config()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file", hint="run `agent-host config init` to write a starter file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_config(text, path, environ)


def parse_config(text: str, path: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Validate TOML `text` as if read from `path` (used for messages and relative paths)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="check quoting and `key = value` syntax") from None
    env = dict(os.environ if environ is None else environ)
    env.setdefault(PYTHON_VARIABLE, sys.executable)
    return _Parser(path, env).config(raw)


_VAR = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\})")


class _Parser:
    """Walks the TOML document; every check names its dotted key path."""

    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self.path_of_file = path
        self.base = path.parent
        self.env = env

    def fail(self, key: str, problem: str, hint: str | None = None) -> ConfigError:
        return ConfigError(f"{self.path_of_file}: {key}: {problem}", hint=hint)

    def config(self, raw: dict[str, Any]) -> Config:
        self.reject_unknown(raw, "", _TOP_KEYS)
        host = self.host(self.table(raw, "host", "host"))
        toolings_raw = self.table(raw, "tooling", "tooling")
        agents_raw = self.table(raw, "agents", "agents")
        toolings = {
            name: self.tooling(name, self.table(toolings_raw, name, f"tooling.{name}")) for name in toolings_raw
        }
        for name in agents_raw:
            problem = name_problem(name)
            if problem is not None:
                raise self.fail(f"agents.{name}", problem, hint="rename the [agents.NAME] table")
        agents = {name: self.agent(name, self.table(agents_raw, name, f"agents.{name}")) for name in agents_raw}
        for index, pattern in enumerate(host.allow):
            if not any(fnmatch.fnmatchcase(name, pattern) for name in toolings):
                raise self.fail(
                    f"host.allow[{index}]",
                    f"{pattern!r} matches no tooling",
                    hint=f"defined toolings: {_names(toolings)}",
                )
        for agent in agents.values():
            for granted in (*agent.toolings, *agent.tools):
                if granted not in toolings:
                    raise self.fail(
                        f"agents.{agent.name}",
                        f"names tooling {granted!r}, which is not defined",
                        hint=f"add a [tooling.{granted}] table or remove it; defined: {_names(toolings)}",
                    )
        return Config(toolings=toolings, agents=agents, host=host, source=self.path_of_file)

    def host(self, raw: dict[str, Any]) -> HostSettings:
        self.reject_unknown(raw, "host", _HOST_KEYS)
        settings = HostSettings(
            inbox_size=self.count(raw, "inbox_size", "host", DEFAULT_INBOX_SIZE),
            max_open_calls=self.count(raw, "max_open_calls", "host", DEFAULT_MAX_OPEN_CALLS),
            max_subscriptions=self.count(raw, "max_subscriptions", "host", DEFAULT_MAX_SUBSCRIPTIONS),
            recv_timeout=self.seconds(raw, "recv_timeout", "host", DEFAULT_RECV_TIMEOUT),
            memory=self.size(raw, "memory", "host") or DEFAULT_MEMORY,
            cpu_time=self.seconds(raw, "cpu_time", "host", DEFAULT_CPU_TIME),
            timeout=self.seconds(raw, "timeout", "host", DEFAULT_RUN_TIMEOUT),
            max_argument_bytes=self.size(raw, "max_argument_bytes", "host") or DEFAULT_MAX_ARGUMENT_BYTES,
            max_result_bytes=self.size(raw, "max_result_bytes", "host") or DEFAULT_MAX_RESULT_BYTES,
            audit_log=self.path(raw, "audit_log", "host"),
            audit_arguments=self.boolean(raw, "audit_arguments", "host", False),
            allow=self.strings(raw, "allow", "host"),
            origin=f"{self.path_of_file} [host]",
        )
        needed = 2 * settings.max_open_calls + settings.max_subscriptions
        if settings.inbox_size < needed:
            raise self.fail(
                "host.inbox_size",
                f"{settings.inbox_size} is too small: {settings.max_open_calls} open calls (2 envelopes each) and "
                f"{settings.max_subscriptions} subscriptions (1 each) need {needed}",
                hint="raise inbox_size or lower max_open_calls / max_subscriptions",
            )
        return settings

    def tooling(self, name: str, raw: dict[str, Any]) -> ToolingConfig:
        key = f"tooling.{name}"
        kind = self.string(raw, "kind", key, default="mcp")
        if kind not in _KINDS:
            raise self.fail(f"{key}.kind", f"expected one of {', '.join(_KINDS)}, got {kind!r}")
        self.reject_unknown(raw, key, _COMMON_TOOLING_KEYS | _KIND_KEYS[kind])
        common: dict[str, Any] = {
            "name": name,
            "timeout": self.seconds(raw, "timeout", key, DEFAULT_REQUEST_TIMEOUT),
            "capabilities": self.capability_map(raw, "capabilities", key),
            "origin": f"{self.path_of_file} [{key}]",
        }
        if kind == "python":
            tools = self.strings(raw, "tools", key)
            if not tools:
                raise self.fail(f"{key}.tools", 'a python tooling needs tools = ["module:attribute", ...]')
            for index, spec in enumerate(tools):
                if not re.fullmatch(r"[A-Za-z_][\w.]*(:[A-Za-z_][\w.]*)?", spec):
                    raise self.fail(f"{key}.tools[{index}]", f'expected "module" or "module:attribute", got {spec!r}')
            folders = tuple(self.base / folder for folder in self.strings(raw, "path", key))
            return ToolingConfig(kind="python", tools=tools, path=folders, **common)
        if kind == "mock":
            return ToolingConfig(kind="mock", mock=parse_mock(self, raw, key, CAPABILITIES), **common)
        return self.mcp_tooling(raw, key, common)

    def mcp_tooling(self, raw: dict[str, Any], key: str, common: dict[str, Any]) -> ToolingConfig:
        command = self.string(raw, "command", key, default=None)
        url = self.string(raw, "url", key, default=None)
        transport = self.string(
            raw, "transport", key, default="http" if url is not None and command is None else "stdio"
        )
        if transport == "stdio":
            if command is None:
                raise self.fail(key, "a stdio tooling needs `command`", hint='e.g. command = "npx"')
            if url is not None or "headers" in raw:
                raise self.fail(key, '`url` and `headers` apply only to transport = "http"')
        elif transport == "http":
            if url is None:
                raise self.fail(key, 'transport = "http" needs `url`', hint='e.g. url = "http://127.0.0.1:8000/mcp"')
            if not url.startswith(("http://", "https://")):
                raise self.fail(f"{key}.url", f"expected an http:// or https:// URL, got {url!r}")
            for stdio_only in ("command", "args", "env", "cwd"):
                if stdio_only in raw:
                    raise self.fail(f"{key}.{stdio_only}", 'applies only to transport = "stdio"')
        else:
            raise self.fail(f"{key}.transport", f'expected "stdio" or "http", got {transport!r}')
        cwd = self.string(raw, "cwd", key, default=None)
        protocol = self.string(raw, "protocol", key, default="auto")
        if protocol not in ("auto", "2025-11-25"):
            raise self.fail(f"{key}.protocol", f'expected "auto" or "2025-11-25", got {protocol!r}')
        return ToolingConfig(
            kind="mcp",
            transport="stdio" if transport == "stdio" else "http",
            command=command,
            args=self.strings(raw, "args", key),
            env=self.string_map(raw, "env", key),
            cwd=self.base / cwd if cwd is not None else None,
            url=url,
            headers=self.string_map(raw, "headers", key),
            connect_timeout=self.seconds(raw, "connect_timeout", key, DEFAULT_CONNECT_TIMEOUT),
            max_backoff=self.seconds(raw, "max_backoff", key, DEFAULT_MAX_BACKOFF),
            protocol="auto" if protocol == "auto" else "2025-11-25",
            **common,
        )

    def capability_list(self, raw: Mapping[str, Any], name: str, key: str) -> tuple[str, ...]:
        values = self.strings(raw, name, key)
        for index, value in enumerate(values):
            if value not in CAPABILITIES:
                raise self.fail(
                    f"{key}.{name}[{index}]", f"unknown capability {value!r}; known: {', '.join(sorted(CAPABILITIES))}"
                )
        return values

    def capability_map(self, raw: Mapping[str, Any], name: str, key: str) -> dict[str, tuple[str, ...]]:
        table = self.table(raw, name, f"{key}.{name}")
        return {glob: self.capability_list(table, glob, f"{key}.{name}") for glob in table}

    def agent(self, name: str, raw: dict[str, Any]) -> AgentConfig:
        key = f"agents.{name}"
        self.reject_unknown(raw, key, _AGENT_KEYS)
        component = self.string(raw, "component", key, default=None)
        toolings = self.strings(raw, "toolings", key)
        allow_lists = {}
        for table in ("tools", "resources"):
            lists_raw = self.table(raw, table, f"{key}.{table}")
            lists = {tooling: self.strings(lists_raw, tooling, f"{key}.{table}") for tooling in lists_raw}
            for tooling in lists:
                if tooling not in toolings:
                    raise self.fail(
                        f"{key}.{table}.{tooling}",
                        f"an allow-list for tooling {tooling!r}, which the agent is not granted",
                        hint=f'add "{tooling}" to {key}.toolings, or remove the allow-list',
                    )
            allow_lists[table] = lists
        return AgentConfig(
            name=name,
            component=self.base / component if component is not None else None,
            input=self.string(raw, "input", key, default=None),
            toolings=toolings,
            tools=allow_lists["tools"],
            resources=allow_lists["resources"],
            memory=self.size(raw, "memory", key),
            cpu_time=self.seconds(raw, "cpu_time", key, None) if "cpu_time" in raw else None,
            timeout=self.seconds(raw, "timeout", key, None) if "timeout" in raw else None,
            dirs=self.dirs(raw, key),
            env=self.string_map(raw, "env", key),
            capabilities=self.capability_list(raw, "capabilities", key) if "capabilities" in raw else None,
            require_approval=self.capability_list(raw, "require_approval", key),
            origin=f"{self.path_of_file} [{key}]",
        )

    def dirs(self, raw: Mapping[str, Any], key: str) -> tuple[DirGrant, ...]:
        value = raw.get("dirs", [])
        if not isinstance(value, list):
            raise self.fail(f"{key}.dirs", f"expected a list of tables, got {_kind(value)}")
        grants = []
        for index, item in enumerate(value):
            where = f"{key}.dirs[{index}]"
            if not isinstance(item, dict):
                raise self.fail(
                    where, f'expected a table such as {{ host = "./data", guest = "/data" }}, got {_kind(item)}'
                )
            self.reject_unknown(item, where, _DIR_KEYS)
            host, guest = (
                self.string(item, "host", where, default=None),
                self.string(item, "guest", where, default=None),
            )
            if host is None or guest is None:
                raise self.fail(where, "needs `host` (a folder on this machine) and `guest` (its path in the guest)")
            folder = (self.base / host).resolve()
            if not folder.is_dir():
                raise self.fail(f"{where}.host", f"{folder} is not a folder")
            if not guest.startswith("/"):
                raise self.fail(f"{where}.guest", f'expected an absolute path such as "/data", got {guest!r}')
            grants.append(DirGrant(host=folder, guest=guest, writable=self.boolean(item, "writable", where, False)))
        return tuple(grants)

    # -- typed accessors ---------------------------------------------------------------------

    def reject_unknown(self, raw: Mapping[str, Any], key: str, known: frozenset[str]) -> None:
        for name in raw:
            if name not in known:
                path = f"{key}.{name}" if key else name
                raise self.fail(path, "unknown key", hint=f"known keys here: {', '.join(sorted(known))}")

    def table(self, raw: Mapping[str, Any], name: str, key: str) -> dict[str, Any]:
        value = raw.get(name, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {_kind(value)}")
        return value

    def string(self, raw: Mapping[str, Any], name: str, key: str, *, default: Any) -> Any:
        if name not in raw:
            return default
        value = raw[name]
        if not isinstance(value, str):
            raise self.fail(f"{key}.{name}", f"expected a string, got {_kind(value)}")
        return self.expand(value, f"{key}.{name}")

    def strings(self, raw: Mapping[str, Any], name: str, key: str) -> tuple[str, ...]:
        value = raw.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(f"{key}.{name}", f"expected a list of strings, got {_kind(value)}")
        return tuple(self.expand(item, f"{key}.{name}[{i}]") for i, item in enumerate(value))

    def string_map(self, raw: Mapping[str, Any], name: str, key: str) -> dict[str, str]:
        value = raw.get(name, {})
        if not isinstance(value, dict):
            raise self.fail(f"{key}.{name}", f"expected a table of strings, got {_kind(value)}")
        out: dict[str, str] = {}
        for item_key, item in value.items():
            if not isinstance(item, str):
                raise self.fail(f"{key}.{name}.{item_key}", f"expected a string, got {_kind(item)}")
            out[item_key] = self.expand(item, f"{key}.{name}.{item_key}")
        return out

    def boolean(self, raw: Mapping[str, Any], name: str, key: str, default: bool) -> bool:
        value = raw.get(name, default)
        if not isinstance(value, bool):
            raise self.fail(f"{key}.{name}", f"expected true or false, got {_kind(value)}")
        return value

    def path(self, raw: Mapping[str, Any], name: str, key: str) -> Path | None:
        value = self.string(raw, name, key, default=None)
        return None if value is None else self.base / value

    def count(self, raw: Mapping[str, Any], name: str, key: str, default: int) -> int:
        value = raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.fail(f"{key}.{name}", f"expected a whole number >= 1, got {value!r}")
        return value

    def seconds(self, raw: Mapping[str, Any], name: str, key: str, default: Any) -> Any:
        value = raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.fail(f"{key}.{name}", f"expected a number of seconds > 0, got {value!r}")
        return float(value)

    def size(self, raw: Mapping[str, Any], name: str, key: str) -> int | None:
        if name not in raw:
            return None
        value = raw[name]
        parsed = parse_size(value) if isinstance(value, str | int) and not isinstance(value, bool) else None
        if parsed is None or parsed <= 0:
            raise self.fail(f"{key}.{name}", f'expected a size such as "256MiB" or a number of bytes, got {value!r}')
        return parsed

    def expand(self, value: str, key: str) -> str:
        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            variable, default = match.group(1), match.group(2)
            if variable in self.env:
                return self.env[variable]
            if default is not None:
                return default
            raise self.fail(
                key,
                f"environment variable {variable} is not set",
                hint=f"set {variable}, or write ${{{variable}:-default}} to give a default",
            )

        return _VAR.sub(replace, value)


_UNITS: Final = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}


def parse_size(value: str | int) -> int | None:
    """Bytes from `256MiB`, `1GB`, `4096` or an int; None when it cannot be read."""
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", value)
    if match is None or match.group(2).lower() not in _UNITS:
        return None
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(size: int) -> str:
    """`64 MiB`, `1.5 GiB`, `512 bytes`: a byte count as a person reads it."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            return f"{size / factor:g} {unit}"
    return f"{size} bytes"


def _kind(value: object) -> str:
    names: dict[type, str] = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names |= {list: "a list", dict: "a table"}
    return f"{names.get(type(value), type(value).__name__)} ({value!r})"


def _names(items: Mapping[str, object]) -> str:
    return ", ".join(sorted(items)) or "(none)"


def starter_config_text(guests: Sequence[tuple[str, str]] = ()) -> str:
    """A commented starter file; values are written with tomli-w so they are valid TOML.

    `guests` are (agent name, component path relative to the file) of the guest folders found
    beside it: each gets an `[agents.NAME]` table granted tooling `demo`. Without any, the agent
    table is an example in comments (so that `config check` never meets a missing folder).
    """
    section: Callable[[dict[str, Any]], str] = tomli_w.dumps

    def commented(table: dict[str, Any]) -> list[str]:
        return [f"# {line}\n" if line else "#\n" for line in section(table).splitlines()]

    parts = [
        "# agent-host configuration (see README.md, section Configuration).\n",
        "# Check it with:  agent-host config check agent-host.toml   (add --connect to start every server)\n",
        "#\n",
        "# Each [tooling.NAME] table is a source of tools and resources; a guest reaches it with\n",
        '# tooling.get("NAME"). kind = "mcp" (an MCP server), transport = "stdio" (a child process)\n',
        '# or "http" (streamable HTTP). `timeout` is seconds per request. ${VAR} reads the environment.\n',
        "\n",
        "# Toolings granted to a guest run without an [agents.NAME] table (agent-host run GUEST),\n",
        "# as --allow does; agents get only their own `toolings`.\n",
        section({"host": {"allow": ["demo"]}}),
        "\n",
        "# The MCP server bundled with agent-host, started with the host's own Python.\n",
        section(
            {
                "tooling": {
                    "demo": {
                        "kind": "mcp",
                        "transport": "stdio",
                        "command": "${AGENT_HOST_PYTHON}",
                        "args": ["-m", "host.demo_server"],
                        "timeout": DEFAULT_REQUEST_TIMEOUT,
                    }
                }
            }
        ),
        "\n",
        "# An npm server, for example (uncomment to use; needs node):\n",
        *commented(
            {
                "tooling": {
                    "files": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-filesystem", "./data"],
                        "env": {"LOG_LEVEL": "info"},
                    }
                }
            }
        ),
        "\n",
        "# A streamable HTTP server (headers may use ${VAR}):\n",
        *commented(
            {
                "tooling": {
                    "remote": {
                        "transport": "http",
                        "url": "http://127.0.0.1:8000/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"},
                    }
                }
            }
        ),
        "\n",
    ]
    example = {"input": "hello", "toolings": ["demo"], "timeout": DEFAULT_RUN_TIMEOUT}
    if guests:
        parts.append(
            "# The guest folders found here, as named agents: agent-host run --agent NAME (or all: agent-host run)\n"
        )
        parts.append(section({"agents": {name: {"component": path, **example} for name, path in guests}}))
    else:
        parts.append(
            "# A named agent (create its guest with: agent-host new scout), run with: agent-host run --agent scout\n"
        )
        parts.extend(commented({"agents": {"scout": {"component": "guests/scout", **example}}}))
    return "".join(parts)
