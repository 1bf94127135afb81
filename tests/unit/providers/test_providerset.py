"""The configured providers of a host (`ProviderSet`): made by kind from a table of factories on first
use, one per name, closed together (with the host), and no SDK imported by a process that uses neither.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_host.app.host import Host
from agent_host.errors import ErrorCode, ToolingError
from agent_host.providers import KINDS, ProviderSet, providerset
from agent_host.providers.anthropic_messages import AnthropicProvider
from agent_host.providers.mock import MockProvider
from agent_host.providers.openai_chat import OpenAIProvider
from agent_host.providers.own_loop import OnOwnLoop
from tests.support.provider_configs import config, providers

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[3]

TABLES = """
[provider.fake]
kind = "mock"
[provider.gpt]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
[provider.claude]
kind = "anthropic"
base_url = "http://127.0.0.1:9"
"""


def test_kinds_are_a_table_of_factories() -> None:
    assert sorted(KINDS) == ["anthropic", "mock", "openai"]


async def test_each_provider_is_made_by_its_kind_once_on_first_use_and_closed_with_the_set() -> None:
    made = ProviderSet(providers(TABLES))
    assert made.names == ["claude", "fake", "gpt"]
    fake, gpt_off, claude_off = made.get("fake"), made.get("gpt"), made.get("claude")
    assert isinstance(gpt_off, OnOwnLoop) and isinstance(claude_off, OnOwnLoop)  # network kinds: off the caller's loop
    gpt, claude = gpt_off.inner, claude_off.inner
    assert isinstance(gpt, OpenAIProvider) and isinstance(claude, AnthropicProvider) and isinstance(fake, MockProvider)
    assert made.get("gpt") is gpt_off and (gpt_off.name, gpt_off.kind, gpt_off.config.kind) == (
        "gpt",
        "openai",
        "openai",
    )
    await made.aclose()
    assert gpt._client.is_closed() and claude._client.is_closed()
    await made.aclose()
    with pytest.raises(ToolingError) as closed:
        made.get("fake")
    assert closed.value.code is ErrorCode.UNAVAILABLE


def test_an_unknown_name_is_not_found_naming_the_configured_ones() -> None:
    with pytest.raises(ToolingError) as caught:
        ProviderSet(providers(TABLES)).get("llm")
    assert caught.value == ToolingError(
        ErrorCode.NOT_FOUND, "no provider named 'llm' is configured; configured: claude, fake, gpt"
    )


def test_a_missing_sdk_at_first_use_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(config: Any) -> Any:
        raise ModuleNotFoundError("No module named 'openai'", name="openai")

    monkeypatch.setitem(providerset.KINDS, "openai", missing)
    with pytest.raises(ToolingError) as caught:
        ProviderSet(providers(TABLES)).get("gpt")
    assert caught.value == ToolingError(
        ErrorCode.UNAVAILABLE,
        "provider 'gpt': kind = \"openai\" needs the openai package, which is not installed: "
        "pip install 'agent-host[openai]'",
    )


def test_the_host_makes_its_providers_and_closes_them_when_it_closes() -> None:
    host = Host(config(TABLES))
    try:
        made = host.bridge.call(_get, host, "gpt", timeout=10, on_timeout=lambda: ToolingError(ErrorCode.TIMEOUT, "x"))
        assert isinstance(made, OnOwnLoop)
        gpt = made.inner
        assert isinstance(gpt, OpenAIProvider) and not gpt._client.is_closed()
    finally:
        host.close()
    assert gpt._client.is_closed()


async def _get(host: Host, name: str) -> Any:
    return host.providers.get(name)


@pytest.mark.real_processes  # its subject: a process of its own
def test_a_process_with_only_mock_providers_imports_neither_sdk() -> None:
    code = (
        "import sys, anyio\n"
        "from agent_host.app.host import Host\n"
        "from agent_host.model import ChatMessage, ChatRequest\n"
        "from agent_host.providers import ProviderSet\n"
        "from tests.support.provider_configs import providers\n"
        'made = ProviderSet(providers(\'[provider.m]\\nkind = "mock"\\nturns = [{ content = "hi" }]\\n\'))\n'
        "ask = ChatRequest(messages=(ChatMessage('user', 'hi'),))\n"
        "assert anyio.run(lambda: made.get('m').chat(ask, model='mock', max_tokens=None)).content == 'hi'\n"
        "assert 'openai' not in sys.modules and 'anthropic' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
