"""Provider tables for the tests: a config parsed from TOML text, with the key the tests hide.

`KEY` is the key every test provider is given (through `${PROVIDER_KEY}`); a test that an error, a log
line or a record never shows it looks for this string. `providers(text)` is the `[provider.NAME]`
tables of `text`, parsed as a config file beside the tests would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from agent_host.config import Config, parse_config
from agent_host.config.providers import ProviderConfig

KEY: Final = "sk-test-KEEP-0ut-of-every-message-0123456789"
"""The key of the test providers (long and unlike any word of a message)."""

FILE: Final = Path("/etc/agent/agent-host.toml")
"""Where the configs of the tests say they come from."""


def config(text: str) -> Config:
    """`text` parsed as a config file, with `${PROVIDER_KEY}` set to `KEY`."""
    return parse_config(text, FILE, {"PROVIDER_KEY": KEY})


def providers(text: str) -> Mapping[str, ProviderConfig]:
    """The `[provider.NAME]` tables of `text`."""
    return config(text).providers


def network(kind: str, url: str, *, model: str, extra: str = "") -> str:
    """A `[provider.llm]` table of `kind` reaching `url`, with the test key, no retries and a 5 s timeout."""
    return (
        f'[provider.llm]\nkind = "{kind}"\nbase_url = "{url}"\napi_key = "${{PROVIDER_KEY}}"\n'
        f'model = "{model}"\nmax_retries = 0\ntimeout = 5\n{extra}'
    )
