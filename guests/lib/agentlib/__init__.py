"""agentlib: small helpers for agent-host guests, bundled into every guest build.

It is pure Python and imports only the bindings componentize-py generates from the WIT
(`wit_world`, `componentize_py_types`), so it runs inside the component. Every helper is optional:
the WIT imports are the contract, this only saves typing.

    from agentlib import ToolingError, call, events, get, read_resource, start, subscribe_resource
    try:
        with get("demo") as demo:                        # the WIT handle, dropped at the end
            total = call(demo, "add", a=2, b=3).structured["sum"]   # a ToolResult
            readme = read_resource(demo, "demo://readme").text       # a Resource
            with subscribe_resource(demo, "demo://note") as note:
                slow = start(demo, "sleep", seconds=2)   # a `Call`; its envelopes carry `slow.id`
                for envelope in events(10, until=slow):
                    ...                                  # `match envelope:` on the generated classes
    except ToolingError as error:                        # error.code == "not-found", ...
        raise Err(f"the demo tooling failed: {error}")   # "code: message"

The family: a function named after a WIT function (snake case) does what it does, takes the handle
first and raises `ToolingError`: `get`, `list_tools`, `list_resources`, `read_resource`,
`subscribe_resource`, `subscribe_resource_list`, `subscribe_tool_list`; the two calls are `call`
(`call-tool-blocking`, keyword arguments, a `ToolResult`) and `start` (`call-tool`, a `Call`).
Values: `ToolResult`, `Resource` (each `.of(wit_record)` for what an event carries), `ToolingError`
(`ToolingError(error)` for an `error` event's payload). The inbox: `events`, `is_final`, `Call`,
`Subscription`, `Events`. Models (`agentlib.models`): `provider`, `chat` (a `Reply`), `stream`
(text and `ToolCall`s), `run_agent` (the tool loop). The names of `agentlib.deprecated` still work
and warn.
"""

from __future__ import annotations

from componentize_py_types import Err as Err

from agentlib.calls import call as call
from agentlib.calls import get as get
from agentlib.calls import list_resources as list_resources
from agentlib.calls import list_tools as list_tools
from agentlib.calls import read_resource as read_resource
from agentlib.deprecated import content_bytes as content_bytes
from agentlib.deprecated import content_text as content_text
from agentlib.deprecated import failure as failure
from agentlib.deprecated import json_of as json_of
from agentlib.deprecated import resource_list_subscription as resource_list_subscription
from agentlib.deprecated import subscription as subscription
from agentlib.deprecated import text_of as text_of
from agentlib.deprecated import tool_list_subscription as tool_list_subscription
from agentlib.errors import ToolingError as ToolingError
from agentlib.inbox import Call as Call
from agentlib.inbox import Events as Events
from agentlib.inbox import Subscription as Subscription
from agentlib.inbox import events as events
from agentlib.inbox import is_final as is_final
from agentlib.inbox import start as start
from agentlib.inbox import subscribe_resource as subscribe_resource
from agentlib.inbox import subscribe_resource_list as subscribe_resource_list
from agentlib.inbox import subscribe_tool_list as subscribe_tool_list
from agentlib.models import Reply as Reply
from agentlib.models import Stream as Stream
from agentlib.models import ToolCall as ToolCall
from agentlib.models import chat as chat
from agentlib.models import provider as provider
from agentlib.models import run_agent as run_agent
from agentlib.models import stream as stream
from agentlib.values import Resource as Resource
from agentlib.values import ToolResult as ToolResult

__all__ = (
    "Call",
    "Err",
    "Events",
    "Reply",
    "Resource",
    "Stream",
    "Subscription",
    "ToolCall",
    "ToolResult",
    "ToolingError",
    "call",
    "chat",
    "events",
    "get",
    "is_final",
    "list_resources",
    "list_tools",
    "provider",
    "read_resource",
    "run_agent",
    "start",
    "stream",
    "subscribe_resource",
    "subscribe_resource_list",
    "subscribe_tool_list",
)
"""The API. The deprecated names (`agentlib.deprecated.__all__`) are importable from here but not
listed, so `from agentlib import *` does not bring them."""
