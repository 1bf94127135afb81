"""agent-host: run AI agents as sandboxed WebAssembly components that reach tools only through
named, granted toolings (MCP servers over stdio or streamable HTTP).

The public API is what this module exports; everything else is internal. Adding a name here is an
API decision. See README.md for the command line and docs/ for the guides.
"""

from host.app import Host as Host
from host.config import AgentConfig as AgentConfig
from host.config import Config as Config
from host.config import ToolingConfig as ToolingConfig
from host.config import default_config as default_config
from host.config import load_config as load_config
from host.errors import ErrorCode as ErrorCode
from host.errors import HostError as HostError
from host.errors import ToolingError as ToolingError
from host.runtime.guest import Outcome as Outcome

__version__ = "0.1.0"

__all__ = (
    "AgentConfig",
    "Config",
    "ErrorCode",
    "Host",
    "HostError",
    "Outcome",
    "ToolingConfig",
    "ToolingError",
    "__version__",
    "default_config",
    "load_config",
)
