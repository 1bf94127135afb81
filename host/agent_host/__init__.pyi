# The public API of agent_host: every name it exports, listed once, each with the module it comes
# from. Type checkers read this file; `__init__.py` reads it too, to serve each name on first use.
# Adding a line is an API decision: the Python API page (docs/embedding/python-api.md) names each.
from agent_host._version import __version__ as __version__
from agent_host.app.client import AsyncSubscription as AsyncSubscription
from agent_host.app.client import AsyncToolingClient as AsyncToolingClient
from agent_host.app.client import Subscription as Subscription
from agent_host.app.client import ToolingClient as ToolingClient
from agent_host.app.client import ToolResult as ToolResult
from agent_host.app.host import Host as Host
from agent_host.components.build import resolve_component as resolve_component
from agent_host.config import AgentConfig as AgentConfig
from agent_host.config import Config as Config
from agent_host.config import ToolingConfig as ToolingConfig
from agent_host.config import default_config as default_config
from agent_host.config import load_config as load_config
from agent_host.config import parse_config as parse_config
from agent_host.errors import AgentHostError as AgentHostError
from agent_host.errors import BuildError as BuildError
from agent_host.errors import CassetteError as CassetteError
from agent_host.errors import ComponentError as ComponentError
from agent_host.errors import ConfigError as ConfigError
from agent_host.errors import ErrorCode as ErrorCode
from agent_host.errors import ExitCode as ExitCode
from agent_host.errors import GuestsStuck as GuestsStuck
from agent_host.errors import HostError as HostError
from agent_host.errors import Interrupted as Interrupted
from agent_host.errors import ReplayDiverged as ReplayDiverged
from agent_host.errors import SdkMismatch as SdkMismatch
from agent_host.errors import ToolingError as ToolingError
from agent_host.errors import UnsafeCacheError as UnsafeCacheError
from agent_host.errors import UsageError as UsageError
from agent_host.errors import UvicornMismatch as UvicornMismatch
from agent_host.errors import WorkerFailure as WorkerFailure
from agent_host.model import ResourceData as ResourceData
from agent_host.model import ResourceSpec as ResourceSpec
from agent_host.model import RunError as RunError
from agent_host.model import RunResult as RunResult
from agent_host.model import RunStatus as RunStatus
from agent_host.model import ToolSpec as ToolSpec
from agent_host.policy.approval import ApprovalRequest as ApprovalRequest
from agent_host.policy.approval import ApproveAll as ApproveAll
from agent_host.policy.approval import Approver as Approver
from agent_host.policy.approval import CallbackApprover as CallbackApprover
from agent_host.policy.approval import Decision as Decision
from agent_host.policy.approval import DenyAll as DenyAll
from agent_host.policy.approval import ElicitationRequest as ElicitationRequest
from agent_host.policy.grants import AgentPolicy as AgentPolicy
from agent_host.runtime.guest import GuestThread as GuestThread
from agent_host.testing import AgentHost as AgentHost
from agent_host.tools import BaseTool as BaseTool
from agent_host.tools import FunctionTool as FunctionTool
from agent_host.tools import Tool as Tool
from agent_host.tools import ToolContext as ToolContext
from agent_host.tools import ToolError as ToolError
from agent_host.tools import tool as tool

__all__: tuple[str, ...]
