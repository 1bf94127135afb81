"""The `[provider.NAME]` tables: one model per kind, chosen by `kind`, and the provider grants.

`kind` picks the model: "openai" (the Chat Completions wire protocol), "anthropic" (the Messages
API) or "mock" (scripted `turns`); it has no default. The two network kinds need their SDK, an
extra of the package: a table naming one whose package is not installed is a problem at load, one
line naming the extra. `api_key` is a secret: never in a repr or a message (`Config.secrets` holds
it, whatever way it was written). A grant (`[agents.NAME] providers`, `[host] providers`) is
`NAME` or `NAME:GLOB`: `split_grant` reads it, `grant_problems` checks it against the defined names.
"""

from __future__ import annotations

import fnmatch
import importlib.util
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import Discriminator, Field, Tag, model_validator

from agent_host.config.base import TAG_ERROR, At, Named, Need, Table, fail
from agent_host.config.defaults import (
    DEFAULT_ANTHROPIC_MAX_TOKENS,
    DEFAULT_ANTHROPIC_URL,
    DEFAULT_MOCK_MODEL,
    DEFAULT_OPENAI_URL,
    DEFAULT_PROVIDER_RETRIES,
    DEFAULT_PROVIDER_TIMEOUT,
)
from agent_host.config.types import Count, HttpUrl, Json, Seconds, Steps

ProviderKind = Literal["openai", "anthropic", "mock"]

PROVIDER_KINDS: Final = ("openai", "anthropic", "mock")

EXTRAS: Final[Mapping[str, str]] = {"openai": "openai", "anthropic": "anthropic"}
"""A network kind -> the package its SDK is imported as, which is also the name of the extra of
agent-host that installs it (`pip install 'agent-host[openai]'`)."""

GRANT_SEPARATOR: Final = ":"
"""Between a provider's name and a glob of its models in a grant (`"other:gpt-4.1-*"`)."""


def install_hint(kind: str) -> str:
    """The one line saying how to install the SDK of network kind `kind`."""
    package = EXTRAS[kind]
    return f"kind = \"{kind}\" needs the {package} package, which is not installed: pip install 'agent-host[{package}]'"


def split_grant(entry: str) -> tuple[str, str | None]:
    """A grant `NAME` or `NAME:GLOB` as (the provider's name, the glob of its models; None: all)."""
    name, separator, glob = entry.partition(GRANT_SEPARATOR)
    return name, glob if separator else None


def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "(none)"


def grant_problems(key: str, entries: tuple[str, ...], defined: frozenset[str] | None) -> list[At]:
    """The problems of the grants `entries` (the list at `key`): each must be `NAME` or `NAME:GLOB`
    with a NAME among `defined` (None: names are not checked)."""
    problems = []
    for index, entry in enumerate(entries):
        name, glob = split_grant(entry)
        example = 'e.g. providers = ["llm", "other:gpt-4.1-*"]'
        if not name or glob == "":
            message = f"expected a provider NAME or NAME:GLOB (a glob of its models), got {entry!r}"
            problems.append(At((key, index), message, example, value=entry))
        elif defined is not None and name not in defined:
            hint = f"add a [provider.{name}] table or remove it; defined: {_names(defined)}"
            problems.append(At((key, index), f"names provider {name!r}, which is not defined", hint, value=entry))
    return problems


class _Provider(Named):
    """What every kind of provider has."""

    kind: ProviderKind
    """What it speaks (each kind's model narrows it)."""
    model: str | None = None
    """The model a request that names none is sent to."""
    models: tuple[str, ...] | None = None
    """Globs of the models it may be asked for ("gpt-4.1-*"); a request for another is denied before
    anything is sent. Absent: any."""

    @model_validator(mode="after")
    def _default_model_is_allowed(self) -> Self:
        if self.model is not None and self.models is not None and not self.allows(self.model):
            hint = f'add a glob matching it to `models`, e.g. models = ["{self.model}", ...]'
            message = f"the default model {self.model!r} matches none of `models`"
            fail(type(self).__name__, [At(("model",), message, hint, self.model, uses=(("model",), ("models",)))])
        return self

    def allows(self, model: str) -> bool:
        """Whether `model` is one this provider may be asked for (its `models` globs; any without them)."""
        return self.models is None or any(fnmatch.fnmatchcase(model, glob) for glob in self.models)


class _NetworkProvider(_Provider):
    """A model server reached over HTTP through its official SDK."""

    api_key: str | None = Field(default=None, repr=False)
    """The key sent with every request (write it as "${VAR}"): never shown, logged or recorded. Absent: a
    placeholder is sent (a local server needs none); the SDK's own variables (OPENAI_API_KEY, ...) are
    never read for it."""
    timeout: Seconds = DEFAULT_PROVIDER_TIMEOUT
    """Seconds one chat may take in all, retries included; a stream: until its first piece, then
    between two pieces. Past it: `timeout`."""
    max_retries: Steps = DEFAULT_PROVIDER_RETRIES
    """Times the SDK sends a request again after a connection error, a 408, 409, 429 or 5xx (waiting as
    the answer's `retry-after` says, else backing off), within `timeout`."""
    headers: Mapping[str, str] = {}
    """HTTP headers sent with every request (values may use ${VAR}; never shown in messages)."""

    @model_validator(mode="after")
    def _sdk_is_installed(self) -> Self:
        if importlib.util.find_spec(EXTRAS[self.kind]) is None:
            fail(type(self).__name__, [At(("kind",), install_hint(self.kind), value=self.kind)])
        return self


class OpenAIProviderConfig(_NetworkProvider):
    """A server speaking the Chat Completions wire protocol (OpenAI, vLLM, llama.cpp, Ollama, LM
    Studio, OpenRouter), through the official `openai` package (`agent-host[openai]`)."""

    kind: Literal["openai"]
    """The Chat Completions wire protocol."""
    base_url: HttpUrl = DEFAULT_OPENAI_URL
    """The API's root, before `/chat/completions` ("http://127.0.0.1:8000/v1" for a local vLLM)."""


class AnthropicProviderConfig(_NetworkProvider):
    """The Anthropic Messages API, through the official `anthropic` package (`agent-host[anthropic]`)."""

    kind: Literal["anthropic"]
    """The Anthropic Messages API."""
    base_url: HttpUrl = DEFAULT_ANTHROPIC_URL
    """The API's root, before `/v1/messages`."""
    max_tokens: Count = DEFAULT_ANTHROPIC_MAX_TOKENS
    """Tokens the model may write when the request names no `max_tokens` (the Messages API requires a
    bound); the agent's output budget lowers it further."""


class MockUsage(Table):
    """The tokens a scripted turn says it used."""

    example = "{ input_tokens = 12, output_tokens = 3 }"

    input_tokens: Steps = 0
    """Tokens of the request."""
    output_tokens: Steps = 0
    """Tokens of the answer."""


class MockToolCall(Table):
    """A tool call a scripted turn makes."""

    needs = {"name": Need("a scripted tool call needs `name`", hint='e.g. { name = "add", arguments = { a = 2 } }')}
    example = '{ name = "add", arguments = { a = 2, b = 3 } }'

    name: str = Field(min_length=1)
    """The tool's name, as offered in the request."""
    arguments: Json = {}
    """Its arguments (a table, kept as written: no ${VAR} expansion)."""
    id: str | None = None
    """The call's id; absent: `call_T_I` (T the turn's number, I the call's, from 1)."""


class MockTurn(Table):
    """One scripted answer: some text, tool calls, or both."""

    example = '{ content = "Hello!" }'

    content: str | None = None
    """The answer's text."""
    tool_calls: tuple[MockToolCall, ...] = ()
    """The tool calls it makes (the finish reason is then "tool-calls")."""
    usage: MockUsage | None = None
    """The tokens it says it used; absent: estimated, one token per 4 characters."""

    @model_validator(mode="after")
    def _says_something(self) -> Self:
        if self.content is None and not self.tool_calls:
            fail("MockTurn", [At((), "a turn needs `content`, `tool_calls` or both", 'e.g. { content = "Hello!" }')])
        return self


class MockProviderConfig(_Provider):
    """A scripted model, for tests and demos: `turns` answered in order, one per chat, shared by
    every guest of the host."""

    kind: Literal["mock"]
    """Answers scripted in this table."""
    model: str | None = DEFAULT_MOCK_MODEL
    """The model it says answered when the request names none."""
    turns: tuple[MockTurn, ...] = ()
    """The answers, one per chat (or stream), in order."""
    repeat_last: bool = Field(default=False, strict=True)
    """Keep answering with the last turn when the script ends (else a chat past it fails, naming the script)."""
    timeout: ClassVar[float] = DEFAULT_PROVIDER_TIMEOUT


def _kind_of(value: Any) -> str | None:
    """The `kind` of a provider table (None when absent); None when it is not a table."""
    if isinstance(value, dict):
        found = value.get("kind")
        return found if isinstance(found, str) or found is None else repr(found)
    return getattr(value, "kind", None)


ProviderConfig = Annotated[
    Annotated[OpenAIProviderConfig, Tag("openai")]
    | Annotated[AnthropicProviderConfig, Tag("anthropic")]
    | Annotated[MockProviderConfig, Tag("mock")],
    Discriminator(
        _kind_of,
        custom_error_type=f"{TAG_ERROR}kind",
        custom_error_message="one of " + ", ".join(f'"{k}"' for k in PROVIDER_KINDS),
    ),
]
"""One `[provider.NAME]` table: its model by `kind`."""

NetworkProviderConfig = OpenAIProviderConfig | AnthropicProviderConfig
"""A provider reached over HTTP: what has `base_url`, `api_key`, `headers`, `timeout` and `max_retries`."""
