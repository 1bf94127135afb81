"""agentlib: the library of agent-host guests, bundled into every guest build.

It is pure Python and imports only the bindings componentize-py generates from the WIT
(`wit_world`, `componentize_py_types`), so it runs inside the component. The WIT imports are the
contract; this makes a guest as short as a tool:

    from agentlib import agent, tooling

    demo = tooling("demo")                  # taken at its first use, inside the run

    @agent
    def run(input: str) -> str:             # or a TypedDict / dataclass: the input parsed as JSON
        return str(demo.add(a=2, b=3))      # a tool is a method: its structured content, else text

`agent` (the guest's `run`), `tooling` (a `Toolbox`: `call`, `start`, `read`, `subscribe`, ...),
`listen` (the inbox as typed events: `Progress`, `Result`, `Failed`, `ResourceUpdated`,
`ResourceListUpdated`, `ToolListUpdated`, `Question`, `ChatDelta`, `ChatEnd`), `provider` (a
`Model`: `chat`, `stream`; `run_agent` the tool loop), and the standard `logging` module, which
reaches the host's log. Failures raise `ToolingError` (`code`, `message`).

The functions of the first version take a WIT handle first and still work: `get`, `call`,
`start`, `list_tools`, `list_resources`, `read_resource`, `subscribe_resource`,
`subscribe_resource_list`, `subscribe_tool_list`, `events`, `is_final`, with `ToolResult`,
`Resource`, `Call`, `Subscription`, `Events`; a `WitWorld` class is a guest as before. The names of
`agentlib.deprecated` still work and warn.
"""

from __future__ import annotations

from componentize_py_types import Err as Err

from agentlib.agent import agent as agent
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
from agentlib.listen import ChatDelta as ChatDelta
from agentlib.listen import ChatEnd as ChatEnd
from agentlib.listen import Failed as Failed
from agentlib.listen import Progress as Progress
from agentlib.listen import Question as Question
from agentlib.listen import ResourceListUpdated as ResourceListUpdated
from agentlib.listen import ResourceUpdated as ResourceUpdated
from agentlib.listen import Result as Result
from agentlib.listen import ToolListUpdated as ToolListUpdated
from agentlib.listen import listen as listen
from agentlib.logs import install as _install_logging
from agentlib.models import Model as Model
from agentlib.models import Reply as Reply
from agentlib.models import Stream as Stream
from agentlib.models import ToolCall as ToolCall
from agentlib.models import chat as chat
from agentlib.models import provider as provider
from agentlib.models import run_agent as run_agent
from agentlib.models import stream as stream
from agentlib.toolbox import Toolbox as Toolbox
from agentlib.toolbox import tooling as tooling
from agentlib.values import Resource as Resource
from agentlib.values import ToolResult as ToolResult

_install_logging()

__all__ = (
    "Call",
    "ChatDelta",
    "ChatEnd",
    "Err",
    "Events",
    "Failed",
    "Model",
    "Progress",
    "Question",
    "Reply",
    "Resource",
    "ResourceListUpdated",
    "ResourceUpdated",
    "Result",
    "Stream",
    "Subscription",
    "ToolCall",
    "ToolListUpdated",
    "ToolResult",
    "Toolbox",
    "ToolingError",
    "agent",
    "call",
    "chat",
    "events",
    "get",
    "is_final",
    "list_resources",
    "list_tools",
    "listen",
    "provider",
    "read_resource",
    "run_agent",
    "start",
    "stream",
    "subscribe_resource",
    "subscribe_resource_list",
    "subscribe_tool_list",
    "tooling",
)
"""The API. The deprecated names (`agentlib.deprecated.__all__`) are importable from here but not
listed, so `from agentlib import *` does not bring them."""
