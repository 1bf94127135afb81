"""`[provider.NAME]` tables (kind openai, anthropic or mock), provider grants and LLM budgets in the config.

One model per kind, chosen by `kind`; a key is a secret when it is `api_key` (never in a repr, a message
or the schema's examples, always in `Config.secrets`); grants name defined providers, as `NAME` or
`NAME:GLOB`; budgets are positive whole numbers; a kind whose SDK is missing is one line naming the extra.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from agent_host.config import parse_config
from agent_host.config.providers import (
    AnthropicProviderConfig,
    MockProviderConfig,
    OpenAIProviderConfig,
    split_grant,
)
from agent_host.config.schema import json_schema
from agent_host.errors import ConfigError

FILE = Path("/etc/agent/agent-host.toml")
KEY = "sk-test-0123456789abcdef"


def error_of(text: str, env: dict[str, str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, FILE, env or {})
    return caught.value


def test_each_kind_is_its_own_table_with_its_defaults() -> None:
    text = (
        '[provider.gpt]\nkind = "openai"\nmodel = "gpt-4.1"\n'
        '[provider.claude]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9/"\n'
        '[provider.fake]\nkind = "mock"\nturns = [{ content = "hi" }]\n'
    )
    providers = parse_config(text, FILE, {}).providers
    gpt, claude, fake = providers["gpt"], providers["claude"], providers["fake"]
    assert isinstance(gpt, OpenAIProviderConfig) and isinstance(claude, AnthropicProviderConfig)
    assert isinstance(fake, MockProviderConfig)
    assert (gpt.base_url, gpt.timeout, gpt.max_retries, gpt.api_key, gpt.models) == (
        "https://api.openai.com/v1",
        60.0,
        2,
        None,
        None,
    )
    assert (claude.base_url, claude.max_tokens, claude.model) == ("http://127.0.0.1:9/", 4096, None)
    assert (fake.model, fake.repeat_last, fake.timeout) == ("mock", False, 60.0)
    assert (gpt.name, gpt.origin) == ("gpt", f"{FILE} [provider.gpt]")


def test_a_table_without_kind_or_with_another_says_which_kinds_there_are() -> None:
    assert error_of('[provider.llm]\nmodel = "x"\n').message == (
        f'{FILE}: provider.llm: needs `kind`: one of "openai", "anthropic", "mock"'
    )
    assert error_of('[provider.llm]\nkind = "opnai"\n').message == (
        f'{FILE}: provider.llm.kind: expected one of "openai", "anthropic", "mock", got \'opnai\''
    )


def test_keys_of_another_kind_are_unknown_and_the_known_ones_are_listed() -> None:
    error = error_of('[provider.llm]\nkind = "openai"\nturns = []\n')
    assert error.message == f"{FILE}: provider.llm.turns: unknown key"
    assert error.hint == ("known keys here: api_key, base_url, headers, kind, max_retries, model, models, timeout")
    assert "provider.m.api_key: unknown key" in str(error_of('[provider.m]\nkind = "mock"\napi_key = "k"\n'))


def test_the_key_is_a_secret_in_every_form_it_is_written() -> None:
    """From `${VAR}` or written as is, it is in `Config.secrets` (cassettes replace it) and no repr shows it."""
    expanded = parse_config('[provider.llm]\nkind = "openai"\napi_key = "${KEY}"\n', FILE, {"KEY": KEY})
    literal = parse_config(f'[provider.llm]\nkind = "anthropic"\napi_key = "{KEY}"\n', FILE, {})
    for config in (expanded, literal):
        provider = config.providers["llm"]
        assert isinstance(provider, OpenAIProviderConfig | AnthropicProviderConfig) and provider.api_key == KEY
        assert KEY in config.secrets
        assert KEY not in repr(config) and KEY not in repr(provider) and KEY not in str(provider)


@pytest.mark.parametrize(
    "text",
    [
        '[provider.llm]\nkind = "openai"\napi_key = "${KEY}"\ntimeout = "${KEY}"\n',
        '[provider.llm]\nkind = "openai"\nmax_retries = "${KEY}"\n',
        '[provider.llm]\nkind = "anthropic"\nbase_url = "${KEY}"\n',
        '[provider.llm]\nkind = "${KEY}"\n',
        '[provider.llm]\nkind = "openai"\nheaders = ["${KEY}"]\n',
    ],
)
def test_a_config_error_never_shows_the_key(text: str) -> None:
    error = error_of(text, {"KEY": KEY})
    assert all(KEY not in line for line in (str(error), *error.problems)), str(error)


def test_the_schema_describes_the_key_without_an_example_or_a_default() -> None:
    schema = json_schema()
    for kind in ("OpenAIProviderConfig", "AnthropicProviderConfig"):
        key = schema["definitions"][kind]["properties"]["api_key"]
        assert key["type"] == "string" and "default" not in key and "examples" not in key
        assert "${VAR}" in key["description"]
    assert "examples" not in json.dumps(schema["properties"]["provider"])


def test_a_default_model_outside_the_models_globs_is_named_with_both_keys() -> None:
    error = error_of('[provider.llm]\nkind = "openai"\nmodel = "o3"\nmodels = ["gpt-4.1-*"]\n')
    assert error.message == f"{FILE}: provider.llm.model: the default model 'o3' matches none of `models`"
    assert error.hint == 'add a glob matching it to `models`, e.g. models = ["o3", ...]'
    config = parse_config('[provider.llm]\nkind = "openai"\nmodel = "gpt-4.1-mini"\nmodels = ["gpt-4.1-*"]\n', FILE, {})
    provider = config.providers["llm"]
    assert provider.allows("gpt-4.1-nano") and not provider.allows("gpt-4o")


def test_mock_turns_say_something_and_their_tool_arguments_are_kept_as_written() -> None:
    text = (
        '[provider.m]\nkind = "mock"\nrepeat_last = true\n'
        'turns = [{ content = "costs ${PRICE:-$$5}" },'
        ' { tool_calls = [{ name = "add", arguments = { note = "${PRICE}" } }], usage = { input_tokens = 9 } }]\n'
    )
    mock = parse_config(text, FILE, {}).providers["m"]
    assert isinstance(mock, MockProviderConfig)
    assert mock.turns[0].content == "costs $5"
    assert mock.turns[1].tool_calls[0].arguments == {"note": "${PRICE}"}
    assert mock.turns[1].usage is not None and (
        mock.turns[1].usage.input_tokens,
        mock.turns[1].usage.output_tokens,
    ) == (
        9,
        0,
    )
    lines = str(error_of('[provider.m]\nkind = "mock"\nturns = [{}, { tool_calls = [{ arguments = {} }] }]\n'))
    assert f"{FILE}: provider.m.turns[0]: a turn needs `content`, `tool_calls` or both" in lines
    assert f"{FILE}: provider.m.turns[1].tool_calls[0]: a scripted tool call needs `name`" in lines


def test_agents_and_host_grant_defined_providers_by_name_or_name_and_glob() -> None:
    text = (
        '[provider.llm]\nkind = "mock"\n[provider.other]\nkind = "mock"\n'
        '[host]\nproviders = ["llm"]\n[agents.a]\nproviders = ["llm", "other:gpt-4.1-*"]\n'
    )
    config = parse_config(text, FILE, {})
    assert config.host.providers == ("llm",)
    assert config.agents["a"].providers == ("llm", "other:gpt-4.1-*")
    assert [split_grant(entry) for entry in config.agents["a"].providers] == [("llm", None), ("other", "gpt-4.1-*")]
    assert parse_config("[agents.b]\n", FILE, {}).agents["b"].providers == ()


def test_a_grant_of_an_undefined_provider_or_of_no_glob_is_named_with_the_fix() -> None:
    text = '[provider.llm]\nkind = "mock"\n[host]\nproviders = ["nope"]\n[agents.a]\nproviders = ["llm:", ":x", "lm"]\n'
    lines = str(error_of(text)).splitlines()
    assert lines == [
        f"{FILE}: host.providers[0]: names provider 'nope', which is not defined",
        "  hint: add a [provider.nope] table or remove it; defined: llm",
        f"{FILE}: agents.a.providers[0]: expected a provider NAME or NAME:GLOB (a glob of its models), got 'llm:'",
        '  hint: e.g. providers = ["llm", "other:gpt-4.1-*"]',
        f"{FILE}: agents.a.providers[1]: expected a provider NAME or NAME:GLOB (a glob of its models), got ':x'",
        '  hint: e.g. providers = ["llm", "other:gpt-4.1-*"]',
        f"{FILE}: agents.a.providers[2]: names provider 'lm', which is not defined",
        "  hint: add a [provider.lm] table or remove it; defined: llm",
    ]


def test_a_provider_name_with_the_grant_separator_is_refused() -> None:
    error = error_of('[provider."a:b"]\nkind = "mock"\n')
    assert error.message == f"{FILE}: provider.a:b: a provider cannot be named 'a:b'"
    assert error.hint == "rename the table without ':': grants write NAME:GLOB (a glob of its models)"


@pytest.mark.parametrize("key", ["llm_requests", "llm_input_tokens", "llm_output_tokens"])
def test_budgets_are_positive_whole_numbers_in_host_and_agents_and_absent_is_unlimited(key: str) -> None:
    config = parse_config(f"[host]\n{key} = 100\n[agents.a]\n{key} = 5\n[agents.b]\n", FILE, {})
    assert (getattr(config.host, key), getattr(config.agents["a"], key), getattr(config.agents["b"], key)) == (
        100,
        5,
        None,
    )
    assert getattr(parse_config("", FILE, {}).host, key) is None
    assert error_of(f"[host]\n{key} = 0\n").message == f"{FILE}: host.{key}: expected a whole number >= 1, got 0"
    assert error_of(f"[agents.a]\n{key} = 1.5\n").message == (
        f"{FILE}: agents.a.{key}: expected a whole number >= 1, got 1.5"
    )


@pytest.mark.parametrize(("kind", "package"), [("openai", "openai"), ("anthropic", "anthropic")])
def test_a_kind_whose_sdk_is_missing_is_one_line_naming_the_extra(
    kind: str, package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked at load: `config check` says it, not the first chat."""
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == package else found(name, *a))
    error = error_of(f'[provider.llm]\nkind = "{kind}"\n')
    assert str(error) == (
        f'{FILE}: provider.llm.kind: kind = "{kind}" needs the {package} package, which is not installed: '
        f"pip install 'agent-host[{package}]'"
    )
    assert parse_config('[provider.m]\nkind = "mock"\n', FILE, {}).providers["m"].kind == "mock"
