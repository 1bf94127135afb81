"""A 2025-11-25 client that stops reading its notifications delays nobody else's.

Two 2025-11-25 clients (the SDK's, in process) subscribe to the same resource of
tests/servers/observed.py over stdio; the first one's connection is made to stall (its
`send_resource_updated` never returns, as a send into a stream nobody reads). The other gets every
update while the stalled send is still pending, not only once the relay gives up on the stalled
session.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPDeprecationWarning

from agent_host import Host
from agent_host.serve import relay as relay_module
from agent_host.serve.mcp_server import build_server
from tests.support.component import OBSERVED_TOML
from tests.support.serve_observed import SERVE, WAIT, run_served

pytestmark = pytest.mark.component


def test_a_stalled_2025_session_does_not_delay_another_sessions_updates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relay_module, "SEND_WAIT", 10 * WAIT, raising=False)  # the stalled send never times out here
    stalled_entered = anyio.Event()
    stalled_cancelled: list[bool] = []
    updates: list[str] = []
    two_updates = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            if len(updates) == 2:
                two_updates.set()

    async def body(catalog: Any, host: Host) -> Any:
        relay = catalog.relay
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            async with Client(build_server(catalog), mode="legacy") as stalled:
                await stalled.subscribe_resource("obs://a")
                (connection,) = list(relay._held)

                async def never_read(uri: str, **kwargs: Any) -> None:
                    stalled_entered.set()
                    try:
                        await anyio.sleep_forever()
                    except anyio.get_cancelled_exc_class():
                        stalled_cancelled.append(True)
                        raise

                connection.send_resource_updated = never_read
                async with Client(build_server(catalog), mode="legacy", message_handler=on_message) as other:
                    await other.subscribe_resource("obs://a")
                    with anyio.fail_after(WAIT):
                        await other.call_tool("t.set", {"name": "a", "text": "one"})
                        await stalled_entered.wait()  # the relay is sending the first update to the stalled one
                        await other.call_tool("t.set", {"name": "a", "text": "two"})
                        await two_updates.wait()
                    return list(stalled_cancelled)

    cancelled_by_then = run_served(OBSERVED_TOML + SERVE, tmp_path, body)
    assert updates == ["obs://a", "obs://a"]
    assert cancelled_by_then == []  # the other session was served while the stalled send still waited
