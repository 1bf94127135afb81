"""Configuration: `agent-host.toml` read with `tomllib` into frozen pydantic models.

Modules: `models` (`[host]`, `[agents.NAME]`, the file), `toolings` (one model per kind and
transport), `mock`, `providers` (`[provider.NAME]`, one model per kind; provider grants), `types`
(sizes, durations, names), `expand` (`${VAR}`), `errors` (every problem in one `ConfigError`),
`loading`, `starter` (`config init`), `schema` (JSON Schema), `defaults`.

Unknown keys, wrong types and missing keys are errors named by their dotted key path; every problem
of a file is reported at once, and nothing is half-loaded. Relative paths are resolved against the
config file's folder. This package imports nothing of the host but `errors`.
"""

from agent_host.config.auth import AuthConfig as AuthConfig
from agent_host.config.auth import ClientCredentialsConfig as ClientCredentialsConfig
from agent_host.config.auth import OAuthConfig as OAuthConfig
from agent_host.config.defaults import DEFAULT_CONNECT_TIMEOUT as DEFAULT_CONNECT_TIMEOUT
from agent_host.config.defaults import DEFAULT_CPU_TIME as DEFAULT_CPU_TIME
from agent_host.config.defaults import DEFAULT_FILE_NAME as DEFAULT_FILE_NAME
from agent_host.config.defaults import DEFAULT_INBOX_SIZE as DEFAULT_INBOX_SIZE
from agent_host.config.defaults import DEFAULT_MAX_ARGUMENT_BYTES as DEFAULT_MAX_ARGUMENT_BYTES
from agent_host.config.defaults import DEFAULT_MAX_BACKOFF as DEFAULT_MAX_BACKOFF
from agent_host.config.defaults import DEFAULT_MAX_OPEN_CALLS as DEFAULT_MAX_OPEN_CALLS
from agent_host.config.defaults import DEFAULT_MAX_OPEN_FILES as DEFAULT_MAX_OPEN_FILES
from agent_host.config.defaults import DEFAULT_MAX_PENDING_BYTES as DEFAULT_MAX_PENDING_BYTES
from agent_host.config.defaults import DEFAULT_MAX_RESULT_BYTES as DEFAULT_MAX_RESULT_BYTES
from agent_host.config.defaults import DEFAULT_MAX_SUBSCRIPTIONS as DEFAULT_MAX_SUBSCRIPTIONS
from agent_host.config.defaults import DEFAULT_MEMORY as DEFAULT_MEMORY
from agent_host.config.defaults import DEFAULT_RECV_TIMEOUT as DEFAULT_RECV_TIMEOUT
from agent_host.config.defaults import DEFAULT_REQUEST_TIMEOUT as DEFAULT_REQUEST_TIMEOUT
from agent_host.config.defaults import DEFAULT_RUN_TIMEOUT as DEFAULT_RUN_TIMEOUT
from agent_host.config.defaults import ENV_CONFIG as ENV_CONFIG
from agent_host.config.errors import Problem as Problem
from agent_host.config.expand import PYTHON_VARIABLE as PYTHON_VARIABLE
from agent_host.config.loading import default_config as default_config
from agent_host.config.loading import find_config_file as find_config_file
from agent_host.config.loading import load_config as load_config
from agent_host.config.loading import parse_config as parse_config
from agent_host.config.mock import MockResource as MockResource
from agent_host.config.mock import MockResult as MockResult
from agent_host.config.mock import MockSpec as MockSpec
from agent_host.config.mock import MockTool as MockTool
from agent_host.config.mock import MockUpdate as MockUpdate
from agent_host.config.models import AgentConfig as AgentConfig
from agent_host.config.models import Config as Config
from agent_host.config.models import DirGrant as DirGrant
from agent_host.config.models import HostSettings as HostSettings
from agent_host.config.models import ServeSettings as ServeSettings
from agent_host.config.providers import AnthropicProviderConfig as AnthropicProviderConfig
from agent_host.config.providers import MockProviderConfig as MockProviderConfig
from agent_host.config.providers import MockToolCall as MockToolCall
from agent_host.config.providers import MockTurn as MockTurn
from agent_host.config.providers import MockUsage as MockUsage
from agent_host.config.providers import NetworkProviderConfig as NetworkProviderConfig
from agent_host.config.providers import OpenAIProviderConfig as OpenAIProviderConfig
from agent_host.config.providers import ProviderConfig as ProviderConfig
from agent_host.config.providers import ProviderKind as ProviderKind
from agent_host.config.providers import split_grant as split_grant
from agent_host.config.schema import json_schema as json_schema
from agent_host.config.schema import schema_text as schema_text
from agent_host.config.starter import starter_config_text as starter_config_text
from agent_host.config.starter import starter_toolings as starter_toolings
from agent_host.config.toolings import HttpToolingConfig as HttpToolingConfig
from agent_host.config.toolings import McpServerConfig as McpServerConfig
from agent_host.config.toolings import McpToolingConfig as McpToolingConfig
from agent_host.config.toolings import MemoryToolingConfig as MemoryToolingConfig
from agent_host.config.toolings import MockToolingConfig as MockToolingConfig
from agent_host.config.toolings import Protocol as Protocol
from agent_host.config.toolings import PythonToolingConfig as PythonToolingConfig
from agent_host.config.toolings import SamplingProvider as SamplingProvider
from agent_host.config.toolings import StdioToolingConfig as StdioToolingConfig
from agent_host.config.toolings import ToolingConfig as ToolingConfig
from agent_host.config.toolings import ToolingKind as ToolingKind
from agent_host.config.toolings import Transport as Transport
from agent_host.config.types import CAPABILITIES as CAPABILITIES
from agent_host.config.types import NAME_PATTERN as NAME_PATTERN
from agent_host.config.types import NAME_RULE as NAME_RULE
from agent_host.config.types import format_size as format_size
from agent_host.config.types import name_problem as name_problem
from agent_host.config.types import parse_size as parse_size

__all__ = (
    "AnthropicProviderConfig",
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
    "SamplingProvider",
    "ServeSettings",
    "HttpToolingConfig",
    "McpServerConfig",
    "McpToolingConfig",
    "MemoryToolingConfig",
    "MockResource",
    "MockResult",
    "MockSpec",
    "MockTool",
    "MockProviderConfig",
    "MockToolCall",
    "MockToolingConfig",
    "MockTurn",
    "MockUsage",
    "NetworkProviderConfig",
    "OpenAIProviderConfig",
    "MockUpdate",
    "Problem",
    "Protocol",
    "ProviderConfig",
    "ProviderKind",
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
    "split_grant",
    "starter_config_text",
    "starter_toolings",
)
