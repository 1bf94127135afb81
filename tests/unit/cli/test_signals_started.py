"""A signal while a command makes its host is raised after the host is made, never inside it.

A Ctrl-C early in `tools`, `call` or `config check --connect` must not land inside anyio's portal
start-up (`Bridge.__init__`), whose thread could then never be joined and the command would hang.
"""

from __future__ import annotations

import os
import signal
from types import TracebackType

import pytest

from agent_host.cli.signals import signals
from agent_host.errors import Interrupted


class Resource:
    def __init__(self, events: list[str]) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the signal lands while it is being made
        events.append("made")
        self.events = events

    def __enter__(self) -> Resource:
        self.events.append("entered")
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.events.append("closed")


def test_a_signal_while_the_host_is_made_is_raised_once_it_is_made_and_it_is_closed() -> None:
    events: list[str] = []
    with pytest.raises(Interrupted), signals(raise_at_once=True) as stopper, stopper.started(lambda: Resource(events)):
        events.append("body")  # never reached
    assert events == ["made", "entered", "closed"]
    assert stopper.raise_at_once  # restored: a signal later in the command still ends it at once
