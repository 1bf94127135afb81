"""`agent-host serve`: configured agents offered to MCP clients as tools, each call a fresh guest.

`agents` prepares the offered agents and runs their calls (with every guarantee of `agent-host run`:
the agent's grants, limits, audit); `mcp_server` is the MCP server in front of them (the SDK's
low-level `Server`, over stdio). Uses the application layer (`agent_host.app.host`), never the runtime.
"""
