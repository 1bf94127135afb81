"""The MCP tooling kind: one connection per server over stdio or streamable HTTP (both protocol eras),
through the official SDK; OAuth and token storage.
"""
