"""`python -m agent_host` is the `agent-host` command."""

from agent_host.cli import entry

if __name__ == "__main__":  # importing the module (a documentation tool inspecting the package) runs nothing
    entry()
