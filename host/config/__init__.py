"""Configuration: `agent-host.toml` read with `tomllib` into frozen pydantic models.

Modules: `models` (`[host]`, `[agents.NAME]`, the file), `toolings` (one model per kind and
transport), `mock`, `types` (sizes, durations, names), `expand` (`${VAR}`), `errors` (every problem
in one `ConfigError`), `loading`, `starter` (`config init`), `schema` (JSON Schema), `defaults`.

Unknown keys, wrong types and missing keys are errors named by their dotted key path; every problem
of a file is reported at once, and nothing is half-loaded. Relative paths are resolved against the
config file's folder. This package imports nothing of the host but `errors`.
"""

from host.config.auth import AuthConfig as AuthConfig
from host.config.auth import ClientCredentialsConfig as ClientCredentialsConfig
from host.config.auth import OAuthConfig as OAuthConfig
from host.config.defaults import DEFAULT_CONNECT_TIMEOUT as DEFAULT_CONNECT_TIMEOUT
from host.config.defaults import DEFAULT_CPU_TIME as DEFAULT_CPU_TIME
from host.config.defaults import DEFAULT_FILE_NAME as DEFAULT_FILE_NAME
from host.config.defaults import DEFAULT_INBOX_SIZE as DEFAULT_INBOX_SIZE
from host.config.defaults import DEFAULT_MAX_ARGUMENT_BYTES as DEFAULT_MAX_ARGUMENT_BYTES
from host.config.defaults import DEFAULT_MAX_BACKOFF as DEFAULT_MAX_BACKOFF
from host.config.defaults import DEFAULT_MAX_OPEN_CALLS as DEFAULT_MAX_OPEN_CALLS
from host.config.defaults import DEFAULT_MAX_OPEN_FILES as DEFAULT_MAX_OPEN_FILES
from host.config.defaults import DEFAULT_MAX_PENDING_BYTES as DEFAULT_MAX_PENDING_BYTES
from host.config.defaults import DEFAULT_MAX_RESULT_BYTES as DEFAULT_MAX_RESULT_BYTES
from host.config.defaults import DEFAULT_MAX_SUBSCRIPTIONS as DEFAULT_MAX_SUBSCRIPTIONS
from host.config.defaults import DEFAULT_MEMORY as DEFAULT_MEMORY
from host.config.defaults import DEFAULT_RECV_TIMEOUT as DEFAULT_RECV_TIMEOUT
from host.config.defaults import DEFAULT_REQUEST_TIMEOUT as DEFAULT_REQUEST_TIMEOUT
from host.config.defaults import DEFAULT_RUN_TIMEOUT as DEFAULT_RUN_TIMEOUT
from host.config.defaults import ENV_CONFIG as ENV_CONFIG
from host.config.errors import Problem as Problem
from host.config.expand import PYTHON_VARIABLE as PYTHON_VARIABLE
from host.config.loading import default_config as default_config
from host.config.loading import find_config_file as find_config_file
from host.config.loading import load_config as load_config
from host.config.loading import parse_config as parse_config
from host.config.mock import MockResource as MockResource
from host.config.mock import MockResult as MockResult
from host.config.mock import MockSpec as MockSpec
from host.config.mock import MockTool as MockTool
from host.config.mock import MockUpdate as MockUpdate
from host.config.models import AgentConfig as AgentConfig
from host.config.models import Config as Config
from host.config.models import DirGrant as DirGrant
from host.config.models import HostSettings as HostSettings
from host.config.models import ServeSettings as ServeSettings
from host.config.schema import json_schema as json_schema
from host.config.schema import schema_text as schema_text
from host.config.starter import starter_config_text as starter_config_text
from host.config.starter import starter_toolings as starter_toolings
from host.config.toolings import HttpToolingConfig as HttpToolingConfig
from host.config.toolings import McpServerConfig as McpServerConfig
from host.config.toolings import McpToolingConfig as McpToolingConfig
from host.config.toolings import MemoryToolingConfig as MemoryToolingConfig
from host.config.toolings import MockToolingConfig as MockToolingConfig
from host.config.toolings import Protocol as Protocol
from host.config.toolings import PythonToolingConfig as PythonToolingConfig
from host.config.toolings import StdioToolingConfig as StdioToolingConfig
from host.config.toolings import ToolingConfig as ToolingConfig
from host.config.toolings import ToolingKind as ToolingKind
from host.config.toolings import Transport as Transport
from host.config.types import CAPABILITIES as CAPABILITIES
from host.config.types import NAME_PATTERN as NAME_PATTERN
from host.config.types import NAME_RULE as NAME_RULE
from host.config.types import format_size as format_size
from host.config.types import name_problem as name_problem
from host.config.types import parse_size as parse_size

__all__ = (
    "AuthConfig",
    "ClientCredentialsConfig",
    "OAuthConfig",
    "CAPABILITIES",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_CPU_TIME",
    "DEFAULT_FILE_NAME",
    "DEFAULT_INBOX_SIZE",
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "DEFAULT_MAX_BACKOFF",
    "DEFAULT_MAX_OPEN_CALLS",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_OPEN_FILES",
    "DEFAULT_MAX_PENDING_BYTES",
    "DEFAULT_MAX_SUBSCRIPTIONS",
    "DEFAULT_MEMORY",
    "DEFAULT_RECV_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_RUN_TIMEOUT",
    "ENV_CONFIG",
    "NAME_PATTERN",
    "NAME_RULE",
    "PYTHON_VARIABLE",
    "AgentConfig",
    "Config",
    "DirGrant",
    "HostSettings",
    "ServeSettings",
    "HttpToolingConfig",
    "McpServerConfig",
    "McpToolingConfig",
    "MemoryToolingConfig",
    "MockResource",
    "MockResult",
    "MockSpec",
    "MockTool",
    "MockToolingConfig",
    "MockUpdate",
    "Problem",
    "Protocol",
    "PythonToolingConfig",
    "StdioToolingConfig",
    "ToolingConfig",
    "ToolingKind",
    "Transport",
    "default_config",
    "find_config_file",
    "format_size",
    "json_schema",
    "load_config",
    "name_problem",
    "parse_config",
    "parse_size",
    "schema_text",
    "starter_config_text",
    "starter_toolings",
)
