"""`python -m agent_host` is the `agent-host` command."""

from agent_host.cli import entry

entry()
