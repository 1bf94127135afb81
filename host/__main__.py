"""`python -m host` is the `agent-host` command."""

from host.cli import main

raise SystemExit(main())
