"""The finder agent: searches with tooling "search" and reports the best hits as JSON.

Input: the query. It calls the `search` tool (any MCP server, Python tool or mock that offers one
taking {"query": ...} and returning {"hits": [...]}) and returns {"query", "count", "best"}.
"""

import json

import wit_world
from agentlib import ToolingError, call, get
from componentize_py_types import Err


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        query = input.strip()
        if not query:
            raise Err("give a query as input")
        try:
            with get("search") as search:
                hits = call(search, "search", query=query).structured["hits"]
        except ToolingError as error:
            raise Err(f"search failed: {error}") from None
        return json.dumps({"query": query, "count": len(hits), "best": hits[:3]})
