"""The bundled demo server, made slow to stop: it ignores SIGTERM and SIGINT and lingers after its
stdin closes (so a client's graceful shutdown has to wait, then kill it).

`python -m tests.servers.stubborn`; prints nothing extra. Used to test that a second signal makes
agent-host exit at once while it is still closing connections.
"""

from __future__ import annotations

import signal
import time

from agent_host.demo_server import build_server

LINGER = 60.0
"""Seconds the server stays alive after its stdin closed."""

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    build_server().run("stdio")
    time.sleep(LINGER)
