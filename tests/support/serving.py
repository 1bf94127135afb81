"""Helpers of the `agent-host serve` tests: the command as a child process, over HTTP or raw stdio,
or as the SDK's stdio client starts it (`sdk_stdio`). Each child has the clean environment of
`cli_process` (the SDK's default one would drop AGENT_HOST_CACHE: the served guests would then be
built into the home cache). `stopped` ends an `HttpServe` by SIGTERM; `mcp_call` makes one raw
`tools/call` over its /mcp endpoint."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.stdio import StdioServerParameters

from tests.support import cli_process
from tests.support.component import REPO
from tests.support.serve_audit import WAIT


def sdk_stdio(*args: str) -> StdioServerParameters:
    """`agent-host serve --stdio ARGS` for the SDK's `Client`, run from the repository with this
    process's environment."""
    command = ["-m", "agent_host", "serve", "--stdio", *args]
    return StdioServerParameters(command=sys.executable, args=command, cwd=str(REPO), env=cli_process.environment())


class RawStdio:
    """`agent-host serve --stdio --agent idle` as a child process, spoken to in JSON-RPC lines (so the
    test holds the server's pid and chooses the protocol era)."""

    def __init__(self, config: Path, *extra: str) -> None:
        chosen = extra or ("--agent", "idle")
        self.process = cli_process.start(
            "serve", "--stdio", "--config", str(config), *chosen, stdin=subprocess.PIPE, cwd=REPO
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request and read its answer."""
        assert self.process.stdout is not None
        self.send(message)
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert answer["id"] == message["id"], answer
        return answer

    def until(self, text: str) -> list[dict[str, Any]]:
        """Read messages until one whose JSON text contains `text` (a guest's log line, say); all read.
        Fails when the server closes its stdout first."""
        assert self.process.stdout is not None
        seen: list[dict[str, Any]] = []
        for line in self.process.stdout:
            seen.append(json.loads(line))
            if text in line:
                return seen
        raise AssertionError(f"the server closed its stdout before {text!r}: {seen}")

    def end(self, *, terminate: bool) -> str:
        """Close stdin (or send SIGTERM) and wait for the exit; the server's stderr."""
        assert self.process.stdin is not None
        if terminate:
            self.process.terminate()
        else:
            self.process.stdin.close()
            self.process.stdin = None  # closed: communicate() must not flush it
        try:
            return self.process.communicate(timeout=60)[1]
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.communicate()


BANNER_LINES = 2
"""Lines `serve --http` prints after its URL line, before serving (`agent_host.serve.banner`)."""


class HttpServe:
    """`agent-host serve --http 127.0.0.1:0` as a child process; `url` is its MCP endpoint."""

    def __init__(
        self,
        config: Path,
        *extra: str,
        env: dict[str, str] | None = None,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.process = cli_process.start(
            "serve", "--http", "127.0.0.1:0", "--config", str(config), *extra, cwd=REPO, env=env, preexec_fn=preexec
        )
        assert self.process.stderr is not None
        self.preamble: list[str] = []
        """What the server wrote on stderr before its URL."""
        self.banner: list[str] = []
        """The lines after its URL that say what it offers and where (read here: `communicate` reads
        the pipe itself, and would miss what this file object has buffered)."""
        stream = self.process.stderr
        for line in stream:  # build and compile progress first, then the URL
            self.preamble.append(line)
            if line.startswith("agent-host: serving MCP on "):
                self.url = line.split()[-1]
                self.base = self.url.removesuffix("/mcp")
                self.banner = [stream.readline().rstrip("\n") for _ in range(BANNER_LINES)]
                return
        raise AssertionError(f"serve did not start: exit {self.process.wait()}")

    def stop(self) -> int:
        """SIGTERM, then wait for the exit; the exit code (`stderr`: what the server wrote after its URL)."""
        self.process.terminate()
        self.stderr = self.process.communicate(timeout=60)[1]
        return self.process.returncode


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}  # fmt: skip
JSON_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def stopped(served: HttpServe) -> tuple[int, str]:
    """SIGTERM, then the exit code and everything the server wrote on stderr since it started."""
    served.process.send_signal(signal.SIGTERM)
    _, stderr = served.process.communicate(timeout=WAIT)
    return served.process.returncode, stderr


def mcp_call(served: HttpServe, tool: str, arguments: str) -> dict[str, Any]:
    """A 2025-06-18 `tools/call` of `tool` with `arguments` (JSON text as sent) over /mcp; its result."""
    with httpx2.Client(headers=JSON_HEADERS, timeout=WAIT) as http:
        opened = http.post(served.url, json=INITIALIZE)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        http.post(served.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        request = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "%s", "arguments": %s}}'
        called = http.post(served.url, content=(request % (tool, arguments)).encode(), headers=session)
    for line in called.text.splitlines():
        if line.startswith("data: ") and '"id":2' in line.replace(" ", ""):
            result: dict[str, Any] = json.loads(line.removeprefix("data: "))["result"]
            return result
    raise AssertionError(f"no answer to the call: {called.status_code} {called.text[:500]}")
