"""MCP servers used as test peers (run as child processes over stdio or HTTP on 127.0.0.1)."""
