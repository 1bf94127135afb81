"""`get` of a tooling that does not connect in time is `unavailable`, with the tooling's own figure.

On a loaded machine the session's outer bound (connect_timeout plus a grace) must not end the wait as
a `timeout` before the connection's own bound: the error is `unavailable` and names `connect_timeout`.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.toolings import Tooling
from tests.support.sessionkit import World

SLOW = '[tooling.s]\ncommand = "never-started"\nconnect_timeout = 0.2\n[agents.tester]\ntoolings = ["s"]\n'


def test_a_connect_outlasting_every_bound_is_unavailable_naming_connect_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(tmp_path, SLOW)

    async def connect_on_a_loaded_machine(name: str) -> Tooling:
        await anyio.sleep_forever()  # the connection's own bound never gets its turn
        raise AssertionError("unreachable")

    monkeypatch.setattr(world.toolings, "connect", connect_on_a_loaded_machine)
    try:
        with pytest.raises(ToolingError) as caught:
            world.session().get("s")
    finally:
        world.close()
    error = caught.value
    assert error.code is ErrorCode.UNAVAILABLE, error
    assert "tooling 's' did not complete the MCP handshake within 0.2 s" in error.message
    assert "raise `connect_timeout` in" in error.message and "[tooling.s]" in error.message
