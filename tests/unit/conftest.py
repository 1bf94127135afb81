"""Fixtures shared by the unit tests of the session parts and the toolings (see `sessionkit`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host.session import GuestSession
from tests.support.sessionkit import World


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """A bridge with the mock and Python toolings of `sessionkit`, closed after the test."""
    world = World(tmp_path)
    yield world
    world.close()


@pytest.fixture
def session(world: World) -> Iterator[GuestSession]:
    """A session of `world` with an audit log, closed after the test."""
    session = world.session(audit=world.audit_log())
    yield session
    session.close()
