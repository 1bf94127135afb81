"""`agent-host dev` as a child process, its output read as it comes (an event, not a sleep).

`Watch(folder, *args)` starts it; `next_answer(waiting_for)` is the next line on stdout once
`waiting_for` appeared on stderr; `wait_err(text)`; `stop()` sends SIGINT and returns the exit code.
"""

from __future__ import annotations

import os
import selectors
import signal
import time
from pathlib import Path
from typing import Final

from tests.support import cli_process
from tests.support.component import REPO

WAIT: Final = 120.0
"""Seconds an answer may take by default (a first run builds and compiles the dev runner)."""


class Watch:
    """`agent-host dev` as a child process; its output read unbuffered (select + os.read)."""

    def __init__(self, folder: Path, *args: str, wait: float = WAIT) -> None:
        self.wait = wait
        self.process = cli_process.start("dev", str(folder), *args, cwd=REPO, text=False)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ, "out")
        self.selector.register(self.process.stderr, selectors.EVENT_READ, "err")
        self.out = ""
        self.err = ""
        self._answers = 0

    def _pump(self, until: float) -> None:
        for key, _ in self.selector.select(max(0.0, until - time.monotonic())):
            chunk = os.read(key.fd, 65536).decode(errors="replace")
            if key.data == "out":
                self.out += chunk
            else:
                self.err += chunk

    def next_answer(self, waiting_for: str = "") -> str:
        """The next complete line on stdout, once `waiting_for` appeared on stderr."""
        deadline = time.monotonic() + self.wait
        while time.monotonic() < deadline:
            lines = self.out.split("\n")[:-1]
            if len(lines) > self._answers and waiting_for in self.err:
                self._answers += 1
                return lines[self._answers - 1]
            self._pump(deadline)
        raise AssertionError(f"no answer within {self.wait} s; stderr so far:\n{self.err}")

    def wait_err(self, text: str) -> None:
        deadline = time.monotonic() + self.wait
        while text not in self.err and time.monotonic() < deadline:
            self._pump(deadline)
        assert text in self.err, self.err

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        _, rest = self.process.communicate(timeout=self.wait)
        self.err += rest.decode(errors="replace")
        return self.process.returncode
