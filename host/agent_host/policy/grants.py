"""What one agent run may do: grants and limits as plain data, and the decisions on them.

Deny by default: an agent may use only the toolings it was granted and, within those, what their
allow-lists match. What is not granted is left out of lists and refused with `denied`; every
refusal names the agent, what was refused and the configuration that would grant it.

This module imports only `config`, `errors` and `globs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_host.config import AgentConfig, Config, DirGrant
from agent_host.errors import ErrorCode, ToolingError, UsageError
from agent_host.policy import globs
from agent_host.policy.code_agents import ANSWER_MAX, CodeLanguage, code_environment, runner_input
from agent_host.policy.provider_grants import LlmLimits, ProviderGrants


@dataclass(frozen=True)
class Grants:
    """The toolings, tools and resources one agent may use.

    Within a granted tooling, optional allow-lists of globs (`fnmatch`, case sensitive) in `tools`
    and `resources` restrict the tools it may see and call and the resource URIs it may see, read
    and watch; a tooling without a list restricts nothing. A name or URI with a dot segment (`..`,
    also percent-encoded) matches no glob (`agent_host.policy.globs`).
    """

    agent: str
    toolings: frozenset[str]
    tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    resources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = "the command line"
    """Where these grants come from: `[agents.NAME] in FILE`, `--allow flags`, ..."""
    how_to_grant: str = "--allow {tooling}"
    """How a person grants a tooling; `{tooling}` is replaced by its name."""

    def check_tooling(self, name: str) -> None:
        """Raise `ToolingError(denied)` unless tooling `name` is granted."""
        if name not in self.toolings:
            raise ToolingError(
                ErrorCode.DENIED,
                f"agent {self.agent!r} is not granted tooling {name!r}; granted: "
                f"{', '.join(sorted(self.toolings)) or '(none)'} (its grants come from {self.source}; "
                f"grant it with {self.how_to_grant.format(tooling=name)})",
            )

    def tool_allowed(self, tooling: str, tool: str) -> bool:
        return _matches(self.tools.get(tooling), tool)

    def resource_allowed(self, tooling: str, uri: str) -> bool:
        return _matches(self.resources.get(tooling), uri)

    def check_tool(self, tooling: str, tool: str) -> None:
        """Raise `ToolingError(denied)` when `tooling` has an allow-list of tools and `tool` matches none."""
        if not self.tool_allowed(tooling, tool):
            raise self._refusal("call tool", tool, tooling, "tools")

    def check_resource(self, tooling: str, uri: str) -> None:
        """Raise `ToolingError(denied)` when `tooling` has an allow-list of resources and `uri` matches none."""
        if not self.resource_allowed(tooling, uri):
            raise self._refusal("use resource", uri, tooling, "resources")

    def _refusal(self, action: str, target: str, tooling: str, table: str) -> ToolingError:
        allow_list = self.tools if table == "tools" else self.resources
        listed = ", ".join(f'"{glob}"' for glob in allow_list.get(tooling, ()))
        hazard = globs.hazard(target)
        if hazard is not None:
            return ToolingError(
                ErrorCode.DENIED,
                f"agent {self.agent!r} may not {action} {target!r} of tooling {tooling!r}: it has {hazard}, "
                f"which no glob of {table}.{tooling} in {self.source} matches (a server would resolve it to "
                "another path); ask for it without dot segments",
            )
        return ToolingError(
            ErrorCode.DENIED,
            f"agent {self.agent!r} may not {action} {target!r} of tooling {tooling!r}: it matches none of "
            f"{table}.{tooling} = [{listed}] in {self.source}; add a matching glob there to grant it",
        )


def _matches(patterns: Sequence[str] | None, name: str) -> bool:
    return patterns is None or any(globs.matches(name, glob) for glob in patterns)


@dataclass(frozen=True)
class Limit:
    """A limit's value and the configuration key that sets it (for messages)."""

    value: float
    key: str


@dataclass(frozen=True)
class Limits:
    """Every per-run limit of one agent."""

    memory: Limit
    cpu_time: Limit
    wall_time: Limit
    max_argument_bytes: Limit
    max_result_bytes: Limit
    guest_output: Limit
    """Bytes of stdout, and as many of stderr, the guest may write in one run (beyond: dropped)."""
    open_files: Limit
    """Host file descriptors the guest may hold through its granted folders (beyond: stopped)."""

    def check_argument_size(self, size: int, what: str) -> None:
        if size > self.max_argument_bytes.value:
            raise ToolingError(
                ErrorCode.LIMIT_EXCEEDED,
                f"the arguments of {what} are {size} bytes, more than the limit of "
                f"{int(self.max_argument_bytes.value)} ({self.max_argument_bytes.key})",
            )

    def check_result_size(self, size: int, what: str) -> None:
        if size > self.max_result_bytes.value:
            raise ToolingError(
                ErrorCode.LIMIT_EXCEEDED,
                f"the result of {what} is {size} bytes, more than the limit of "
                f"{int(self.max_result_bytes.value)} ({self.max_result_bytes.key})",
            )


@dataclass(frozen=True)
class Capabilities:
    """Which capabilities an agent holds and which need approval (see `agent_host.policy.capabilities`)."""

    agent: str
    held: frozenset[str] | None = None
    """None: not restricted (granting a tooling is consent to its tools)."""
    require_approval: frozenset[str] = frozenset()
    source: str = "the command line"

    def check(self, tooling: str, tool: str, needed: frozenset[str]) -> frozenset[str]:
        """Refuse a call needing a capability the agent does not hold; return those needing approval."""
        if self.held is not None:
            missing = sorted(needed - self.held)
            if missing:
                raise ToolingError(
                    ErrorCode.DENIED,
                    f"agent {self.agent!r} may not call tool {tool!r} of tooling {tooling!r}: it needs "
                    f"{', '.join(missing)}, which the agent does not hold (capabilities = "
                    f"[{', '.join(repr(c) for c in sorted(self.held))}] in {self.source}); add it there to grant it",
                )
        return needed & self.require_approval


def no_file_key(key: str) -> str:
    """Where to set `[host] KEY` when no config file is in use (messages: "the limit is ...")."""
    return (
        f"the default `{key}`; no config file is in use: set it in [host] of agent-host.toml, which "
        "`agent-host config init` writes"
    )


@dataclass(frozen=True)
class AgentPolicy:
    """Everything the host enforces for one agent run."""

    grants: Grants
    limits: Limits
    dirs: tuple[DirGrant, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    capabilities: Capabilities | None = None
    providers: ProviderGrants = field(default_factory=lambda: ProviderGrants("agent"))
    """The providers and models it may ask (none by default)."""
    llm: LlmLimits = field(default_factory=LlmLimits)
    """Its model budgets for one run (unlimited by default)."""
    code: CodeLanguage | None = None
    """A code agent's language: its input is a snippet, given to the runner in `runner_input`'s envelope."""

    def guest_input(self, text: str) -> str:
        """What the guest's `run` receives for the run's input `text`: `text`, or for a code agent the
        runner's envelope of it (`code_agents.runner_input`)."""
        if self.code is None:
            return text
        answer = min(int(self.limits.max_result_bytes.value), ANSWER_MAX)
        return runner_input(text, self.grants.toolings, int(self.limits.guest_output.value), answer)

    @classmethod
    def resolve(
        cls, config: Config, name: str, agent: AgentConfig | None = None, allow: Iterable[str] = ()
    ) -> AgentPolicy:
        """The policy of agent `name`, from `config`, its table `agent` (if any) and the `--allow` flags.

        The agent may `get` the toolings granted by its `[agents.NAME]` table, by `--allow`, by
        `[host] allow` (for a guest run without an agent table), or, with the embedded default
        configuration (no config file), tooling `demo`. The frozen result holds those grants, the
        limits (each with its source, for messages) and the WASI context the guest gets (preopened
        directories and environment variables; nothing else). Raises `UsageError` when an `--allow`
        value matches no configured tooling.
        """
        allowed = set(_expand_allow(config, allow))
        if agent is not None:
            source = agent.origin
            how = f'toolings = ["{{tooling}}"] in {agent.origin}'
            granted = set(agent.toolings) | allowed
        elif config.source is None:
            source, how, granted = "the embedded default configuration", "--allow {tooling}", set(config.toolings)
        else:
            defaults = set(_expand_allow(config, config.host.allow))
            sources = [f"allow in {config.host.origin}"] if defaults else []
            sources += ["the --allow flags"] if allowed else []
            source = " and ".join(sources) or (
                f"no [agents.NAME] table, no --allow and no [host] allow in {config.describe_source()}: deny by default"
            )
            how = "--allow {tooling}, [host] allow, or an [agents.NAME] table"
            granted = allowed | defaults
        grants = Grants(
            agent=name,
            toolings=frozenset(granted),
            tools=dict(agent.tools) if agent is not None else {},
            resources=dict(agent.resources) if agent is not None else {},
            source=source,
            how_to_grant=how,
        )
        host = config.host
        where = agent.origin if agent is not None else None

        def limit(own: float | None, default: float, key: str) -> Limit:
            if own is not None and where is not None:
                return Limit(own, f"{key} in {where}")
            if config.source is None:
                return Limit(default, no_file_key(key))
            return Limit(default, f"{key} in {host.origin}")

        limits = Limits(
            memory=limit(agent.memory if agent else None, host.memory, "memory"),
            cpu_time=limit(agent.cpu_time if agent else None, host.cpu_time, "cpu_time"),
            wall_time=limit(agent.timeout if agent else None, host.timeout, "timeout"),
            max_argument_bytes=limit(None, host.max_argument_bytes, "max_argument_bytes"),
            max_result_bytes=limit(None, host.max_result_bytes, "max_result_bytes"),
            guest_output=limit(None, host.guest_output_max, "guest_output_max"),
            open_files=limit(agent.max_open_files if agent else None, host.max_open_files, "max_open_files"),
        )
        capabilities = Capabilities(
            agent=name,
            held=frozenset(agent.capabilities) if agent is not None and agent.capabilities is not None else None,
            require_approval=frozenset(agent.require_approval) if agent is not None else frozenset(),
            source=source,
        )
        if agent is not None:
            provider_grants = ProviderGrants.parse(name, agent.providers, f"providers in {agent.origin}")
        else:
            provider_grants = ProviderGrants.parse(name, host.providers, f"providers in {host.origin}")

        def budget(key: str) -> int | None:
            own = getattr(agent, key) if agent is not None else None
            value: int | None = own if own is not None else getattr(host, key)
            return value

        llm_where = (
            agent.origin
            if agent is not None
            and any(
                getattr(agent, key) is not None for key in ("llm_requests", "llm_input_tokens", "llm_output_tokens")
            )
            else host.origin
        )
        return cls(
            grants=grants,
            limits=limits,
            dirs=agent.dirs if agent is not None else (),
            env=_environment(agent),
            capabilities=capabilities,
            providers=provider_grants,
            llm=LlmLimits(budget("llm_requests"), budget("llm_input_tokens"), budget("llm_output_tokens"), llm_where),
            code=agent.code if agent is not None else None,
        )


def _environment(agent: AgentConfig | None) -> dict[str, str]:
    """The guest's environment: its table's `env`, and for a code agent the runner's variable after it."""
    env = dict(agent.env) if agent is not None else {}
    if agent is not None and agent.code is not None:
        env.update(code_environment(agent.code))
    return env


def _expand_allow(config: Config, allow: Iterable[str]) -> Iterable[str]:
    """`--allow` values: tooling names or globs (`*` grants every configured tooling)."""
    for pattern in allow:
        matched = [name for name in config.toolings if globs.matches(name, pattern)]
        if not matched:
            raise UsageError(
                f"--allow {pattern}: no configured tooling matches",
                hint=f"configured toolings: {', '.join(sorted(config.toolings)) or '(none)'} "
                f"({config.describe_source()})",
            )
        yield from matched
