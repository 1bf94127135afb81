"""The finder agent: searches with tooling "search" and reports the best hits as JSON.

Input: the query. It calls the `search` tool (any MCP server, Python tool or mock that offers one
taking {"query": ...} and returning {"hits": [...]}) and returns {"query", "count", "best"}.
"""

from agentlib import Err, ToolingError, agent, tooling

search = tooling("search")


@agent
def run(input: str) -> dict[str, object]:
    query = input.strip()
    if not query:
        raise Err("give a query as input")  # the failure's text, as it is
    try:
        hits = search.search(query=query)["hits"]
    except ToolingError as error:
        raise Err(f"search failed: {error}") from None
    return {"query": query, "count": len(hits), "best": hits[:3]}
