"""`agent-host serve` at its edges: a busy port, nothing to offer, stdin closing with requests in
flight, a resource that does not exist.

A port in use is one line naming the address and exit 2, not a traceback; a config offering nothing
says so on stderr rather than serving an empty `tools/list`; `serve --stdio` answers the requests it
had received when stdin closed; `resources/read` of a URI that does not exist answers -32602 with
the URI in `data`, as a plain SDK `MCPServer` does (SEP-2164).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.catalog import build_catalog
from agent_host.serve.mcp_server import build_server
from tests.support import cli_process
from tests.support.component import OBSERVED_TOML, REPO
from tests.support.serving import INITIALIZE, RawStdio

pytestmark = pytest.mark.component

IDLE = REPO / "tests" / "guests" / "probe"  # its idle part: input = milliseconds to wait
CONFIG = f'[agents.idle]\ncomponent = "{IDLE}"\n'
SERVE_TIMEOUT = 120
"""Seconds a `serve` child may take to fail or end (it builds the guest first)."""


def test_a_port_in_use_is_one_line_naming_the_address_and_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        done = cli_process.run("serve", "--http", address, "--config", str(config), timeout=SERVE_TIMEOUT, cwd=REPO)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    why = "the address is in use (another process listens there)"
    assert errors == [f"agent-host: error: cannot listen on {address}: {why}"]


def test_serving_nothing_says_so_on_stderr_naming_the_config(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text('[agents.lonely]\ninput = "no component"\n')
    server = RawStdio(config, "--approve", "deny")
    assert server.ask(INITIALIZE)["id"] == 1
    stderr = server.end(terminate=False)
    assert server.process.returncode == 0, stderr
    assert f"agent-host: warning: nothing to offer: {config} defines no agent with a component" in stderr


def test_stdio_answers_the_requests_it_received_before_stdin_closed(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    server = RawStdio(config)
    assert server.ask(INITIALIZE)["id"] == 1
    server.send({"method": "notifications/initialized"})
    for number in (2, 3):
        arguments = {"input": "300"}  # waits 0.3 s in its inbox: still running when stdin closes
        server.send({"id": number, "method": "tools/call", "params": {"name": "idle", "arguments": arguments}})
    assert server.process.stdin is not None
    server.process.stdin.close()
    server.process.stdin = None
    stdout, stderr = server.process.communicate(timeout=SERVE_TIMEOUT)
    assert server.process.returncode == 0, stderr
    answers = {message["id"]: message for message in map(json.loads, stdout.splitlines()) if "id" in message}
    assert sorted(answers) == [2, 3], stdout  # dropped before the fix
    assert all(answer["result"]["content"][0]["text"] == "idle done" for answer in answers.values())


def test_reading_a_resource_that_does_not_exist_is_invalid_params_with_the_uri(tmp_path: Path) -> None:
    """As a plain SDK MCPServer answers (mcp.server.mcpserver.server._handle_read_resource)."""
    grants = '[serve]\ntoolings = ["t"]\ngrants = { resources = { t = ["obs://*"] } }\n'
    config = parse_config(OBSERVED_TOML + grants, tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config)

        async def main() -> Any:
            async with catalog.running(), Client(build_server(catalog)) as client:
                try:
                    await client.read_resource("obs://missing")
                except MCPError as exc:
                    return exc
            raise AssertionError("obs://missing does not exist")

        refused = anyio.run(main)
    assert refused.code == -32602, refused
    assert refused.error.data == {"uri": "obs://missing"}
    assert str(refused).startswith("not-found: ")
