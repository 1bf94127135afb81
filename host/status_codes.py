"""Exit codes of the `agent-host` command: one table, used by every subcommand.

0 success; 1 the guest's `run` (or a `call`ed tool) returned an error; 2 usage, configuration or
build error; 3 the guest trapped or hit a limit; 128 + N stopped by signal N, as shells report it
(130 SIGINT, 143 SIGTERM).
"""

import signal
from typing import Final

SUCCESS: Final = 0
GUEST_ERROR: Final = 1
USAGE_ERROR: Final = 2
TRAP: Final = 3
INTERRUPTED: Final = 130
"""SIGINT (Ctrl-C), and any stop request that came with no signal."""
TERMINATED: Final = 143
"""SIGTERM."""


def for_signal(signum: int | None) -> int:
    """The exit code of a command stopped by signal `signum` (SIGINT when None)."""
    return 128 + (signum if signum is not None else signal.SIGINT)
