"""The pytest plugin (entry point `pytest11`, so installed with the package): the `agent_host` fixture.

Cheap to import (pytest loads it at every start): the host is imported when a test asks for the
fixture. Each test gets its own `AgentHost` (`agent_host.testing.runner`), closed after the test; relative
paths start in the folder pytest was started in (as for `agent-host run`). Compiled components (the
dev runner too) are cached on disk, so only the first run on a machine pays for a build.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from agent_host.testing.runner import AgentHost


@pytest.fixture
def agent_host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentHost]:
    """Run a guest: `agent_host.run("guests/demo", input="hi", toolings={"demo": server})` returns
    its result (`output`, `exit_code`, `error`, `stderr`, `audit`). See `AgentHost.run`."""
    from agent_host.testing.runner import AgentHost

    with AgentHost(request.config.invocation_params.dir, tmp_path_factory.mktemp("agent_host")) as host:
        yield host
