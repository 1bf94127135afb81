"""A provider's secrets (its `api_key`, its header values) and hiding them in text: `redacted`.

Imports nothing of the SDKs nor of the HTTP client: every provider module may use it.
"""

from __future__ import annotations

from typing import Final

from agent_host.config.providers import NetworkProviderConfig, ProviderConfig

SECRET_MINIMUM: Final = 6
"""Characters a header value needs to be hidden from messages (a shorter one would hide ordinary
words); the `api_key` is hidden whatever its length."""

HIDDEN: Final = "[hidden]"
"""What a secret is replaced with."""


def secrets_of(config: ProviderConfig) -> list[str]:
    """What no message may show: the `api_key` and the header values (each as it is and as Python
    quotes it), longest first."""
    if not isinstance(config, NetworkProviderConfig):
        return []
    values = [value for value in config.headers.values() if len(value) >= SECRET_MINIMUM]
    values += [config.api_key] if config.api_key else []
    found: set[str] = set()
    for value in values:
        found.update({value, repr(value)[1:-1], repr(value.encode("utf-8", "replace"))[2:-1]})
    return sorted(found, key=len, reverse=True)


def redacted(text: str, secrets: list[str]) -> str:
    """`text` with each of `secrets` replaced by `HIDDEN`."""
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return text
