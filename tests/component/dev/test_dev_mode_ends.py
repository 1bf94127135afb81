"""How `agent-host dev` ends: Ctrl-C during a run prints no "watching"; a folder renamed away is
said so, not an internal error.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Final

import pytest

from tests.support.dev_guest import GUEST
from tests.support.dev_watch import WAIT, Watch

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]
"""180 s, not the suite's 60: in a fresh cache the first test of a worker to need the example guests or the
dev runner builds and compiles them (30-40 s alone), and the others wait for that build (`cache.turn`); a fresh
run that was loaded took over 60 s."""

TALKING: Final = GUEST.replace("import json\n", "import json\nimport sys\n", 1).replace(
    '        if input == "slow":\n', '        if input == "slow":\n            print("sleeping now", file=sys.stderr)\n'
)
"""The dev-mode test guest, saying on stderr when it starts its slow call."""


@pytest.fixture
def devguest(tmp_path: Path) -> Path:
    folder = tmp_path / "devguest"
    folder.mkdir()
    (folder / "app.py").write_text(TALKING.replace("VERSION", "v1"))
    return folder


def test_ctrl_c_during_a_run_ends_dev_without_watching_again(devguest: Path) -> None:
    watch = Watch(devguest, "--input", "slow")
    try:
        watch.wait_err("[devguest] sleeping now")
        watch.process.send_signal(signal.SIGINT)
    finally:
        code = watch.stop()
    assert code == 130, watch.err
    assert "watching" not in watch.err, watch.err


def test_a_watched_folder_renamed_away_ends_dev_saying_so(devguest: Path) -> None:
    watch = Watch(devguest, "--input", "hello")
    try:
        assert watch.next_answer() == "v1 hello"
        watch.wait_err("watching")
        devguest.rename(devguest.with_name("renamed"))
        watch.wait_err("agent-host: error:")
        watch.process.wait(timeout=WAIT)  # it ends by itself: no signal is sent
    finally:
        code = watch.stop()
    assert code == 2, watch.err
    assert "internal" not in watch.err and "preopen" not in watch.err, watch.err
    assert f"{devguest.resolve()}: the guest folder is gone (renamed or removed)" in watch.err
