"""`@modelcontextprotocol/server-everything` over streamable HTTP on a free 127.0.0.1 port, for the bench.

A server that is not ours (TypeScript SDK, Express, 2025-11-25 protocol era), so no quirk of the
bundled demo server hides in the bench's ratios. Installed pinned into the cache folder by the
component tests' `npm_bin` (on first use; needs node and npm). `start_everything` returns the
reason instead when it cannot run; `EverythingHttp.stop` ends the process.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Final

import pytest

from tests.support.component import EVERYTHING_PACKAGE, EVERYTHING_VERSION, SERVER_START_TIMEOUT, npm_bin

READY: Final = "listening on port"
"""What the server writes on stderr once it accepts connections."""
POLL: Final = 0.05
"""Seconds between looks at the server's stderr while it starts."""
STOP_TIMEOUT: Final = 10.0
"""Seconds the server may take to exit after SIGTERM before it is killed."""


class EverythingHttp:
    """One server-everything process serving streamable HTTP at `url`."""

    def __init__(self, binary: Path) -> None:
        node = shutil.which("node")
        assert node is not None, "npm_bin checked that node is on PATH"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/mcp"
        self._log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self.process = subprocess.Popen(
            [node, str(binary.resolve()), "streamableHttp"],
            env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            self._log.seek(0)
            text = self._log.read()
            if READY in text:
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server-everything did not start on {self.url}: {text[-500:]!r}")
            time.sleep(POLL)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def start_everything() -> EverythingHttp | str:
    """The server, started; or why it cannot run here (node or npm missing)."""
    try:
        binary = npm_bin(EVERYTHING_PACKAGE, EVERYTHING_VERSION, "mcp-server-everything")
    except pytest.skip.Exception as skipped:
        return str(skipped)
    return EverythingHttp(binary)
