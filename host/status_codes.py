"""Exit codes of the `agent-host` command: one table, used by every subcommand.

0 success; 1 the guest's `run` (or a `call`ed tool) returned an error; 2 usage, configuration or
build error; 3 the guest trapped or hit a limit; 130 interrupted by the user (SIGINT).
"""

from typing import Final

SUCCESS: Final = 0
GUEST_ERROR: Final = 1
USAGE_ERROR: Final = 2
TRAP: Final = 3
INTERRUPTED: Final = 130
