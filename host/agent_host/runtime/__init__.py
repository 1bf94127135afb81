"""The wasmtime side of the host: engine and component cache, WIT imports, guest threads.

Only this package imports wasmtime; it never imports mcp.
"""
