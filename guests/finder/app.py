"""The finder agent: searches with tooling "search" and reports the best hits as JSON.

Input: the query. It calls the `search` tool (any MCP server, Python tool or mock that offers one
taking {"query": ...} and returning {"hits": [...]}) and returns {"query", "count", "best"}.
"""

import json

import wit_world
from agentlib import call, failure
from componentize_py_types import Err
from wit_world.imports import tooling


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        query = input.strip()
        if not query:
            raise Err("give a query as input")
        try:
            with tooling.get("search") as search:
                hits = call(search, "search", query=query)["structuredContent"]["hits"]
        except Err as err:
            raise Err(f"search failed: {failure(err)}") from None
        return json.dumps({"query": query, "count": len(hits), "best": hits[:3]})
