"""Finding, reading and validating the config file; the embedded default.

Where the configuration comes from, first match wins: `--config FILE`, the `AGENT_HOST_CONFIG`
environment variable, `./agent-host.toml`, else the embedded default (tooling `demo`: the MCP
server bundled in `host.demo_server`, started with the host's own Python over stdio).
Nothing is half-loaded: either a whole `Config` comes back or one `ConfigError` names the file and
every problem found (unset variables, then the problems of validation), each quoting what the file
says where a value came from the environment (`${TOKEN}`, never the token).
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from host.config.base import Source
from host.config.defaults import DEFAULT_FILE_NAME, ENV_CONFIG
from host.config.errors import config_error, problems_of
from host.config.expand import expand
from host.config.models import Config
from host.config.toolings import StdioToolingConfig
from host.errors import ConfigError


def default_config() -> Config:
    """The embedded default: tooling `demo`, the bundled MCP server over stdio."""
    demo = StdioToolingConfig(command=sys.executable, args=("-m", "host.demo_server"))
    return Config(tooling={"demo": demo})


def find_config_file(explicit: str | None, cwd: Path | None = None) -> Path | None:
    """The config file to use, or None for the embedded default."""
    if explicit:
        return Path(explicit)
    from_env = os.environ.get(ENV_CONFIG)
    if from_env:
        return Path(from_env)
    candidate = (cwd or Path.cwd()) / DEFAULT_FILE_NAME
    return candidate if candidate.is_file() else None


def load_config(path: Path | None, environ: Mapping[str, str] | None = None) -> Config:
    """Read and validate `path`, or return the embedded default when `path` is None.

    Raises `ConfigError` when the file is missing, unreadable, not TOML or not a valid config.
    """
    if path is None:
        return default_config()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file", hint="run `agent-host config init` to write a starter file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_config(text, path, environ)


def parse_config(text: str, path: Path, environ: Mapping[str, str] | None = None) -> Config:
    """Validate TOML `text` as if read from `path` (named in messages; relative paths are resolved
    against its folder). `environ` (default: the process's) is what `${VAR}` reads.

    Raises `ConfigError` naming every problem found.
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="check quoting and `key = value` syntax") from None
    expanded = expand(raw, os.environ if environ is None else environ, Config)
    tables = expanded.tree.get("tooling", {})
    toolings = frozenset(tables) if isinstance(tables, dict) else None
    source = Source(file=path, toolings=toolings, written=raw)
    problems = list(expanded.problems)
    try:
        config = Config.model_validate(expanded.tree, context=source)
    except ValidationError as exc:
        problems += problems_of(exc, Config)
    if problems:
        raise config_error(path, [problem.shown(expanded.written) for problem in problems])
    return config
