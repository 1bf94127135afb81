"""Benchmarks (`make bench`): agent-host beside the raw MCP SDK, in the same run, as ratios."""
