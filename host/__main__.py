"""`python -m host` is the `agent-host` command."""

from host.cli import entry

entry()
