"""Configuration: valid files load into models; every mistake names the file, the key and the fix.

TOML as in the design with `${VAR}` expansion; errors name the file, the key path and what is expected;
`config init` writes a commented starter file that loads.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from agent_host.config import (
    HttpToolingConfig,
    MockToolingConfig,
    PythonToolingConfig,
    StdioToolingConfig,
    ToolingConfig,
    default_config,
    find_config_file,
    load_config,
    parse_config,
    parse_size,
    starter_config_text,
)
from agent_host.errors import ConfigError

DESIGN_EXAMPLE = """
[tooling.files]
kind = "mcp"
transport = "stdio"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "./data"]
env = { LOG_LEVEL = "info" }
timeout = 30

[tooling.remote]
kind = "mcp"
transport = "http"
url = "http://127.0.0.1:8000/mcp"
headers = { Authorization = "Bearer ${TOKEN}" }

[agents.watcher]
component = "guests/watcher"
input = '{"uri": "file:///data/a.txt"}'
toolings = ["files"]
tools = { files = ["read_*"] }
memory = "256MiB"
timeout = 300
"""


def parse(text: str, env: dict[str, str] | None = None, path: Path = Path("/etc/agent/agent-host.toml")) -> object:
    return parse_config(text, path, env if env is not None else {})


def stdio(tooling: ToolingConfig) -> StdioToolingConfig:
    assert isinstance(tooling, StdioToolingConfig)
    return tooling


def error_of(text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text, env)
    return str(caught.value)


def test_the_design_example_loads_with_every_value() -> None:
    config = parse_config(DESIGN_EXAMPLE, Path("/etc/agent/agent-host.toml"), {"TOKEN": "t0k"})
    files, remote = config.toolings["files"], config.toolings["remote"]
    assert isinstance(files, StdioToolingConfig) and isinstance(remote, HttpToolingConfig)
    assert (files.transport, files.command, files.args) == (
        "stdio",
        "npx",
        ("-y", "@modelcontextprotocol/server-filesystem", "./data"),
    )
    assert files.env == {"LOG_LEVEL": "info"} and files.timeout == 30.0
    assert (remote.transport, remote.url, remote.headers) == (
        "http",
        "http://127.0.0.1:8000/mcp",
        {"Authorization": "Bearer t0k"},
    )
    watcher = config.agents["watcher"]
    assert watcher.component == Path("/etc/agent/guests/watcher")
    assert watcher.toolings == ("files",) and watcher.tools == {"files": ("read_*",)}
    assert watcher.memory == 256 * 1024 * 1024 and watcher.timeout == 300.0
    assert watcher.input == '{"uri": "file:///data/a.txt"}'


def test_transport_defaults_to_stdio_with_a_command_and_http_with_a_url() -> None:
    config = parse_config(
        '[tooling.a]\ncommand = "x"\n[tooling.b]\nurl = "http://127.0.0.1:1/mcp"\n', Path("c.toml"), {}
    )
    assert isinstance(config.toolings["a"], StdioToolingConfig) and config.toolings["a"].transport == "stdio"
    assert isinstance(config.toolings["b"], HttpToolingConfig) and config.toolings["b"].transport == "http"


def test_variables_expand_with_defaults_and_dollar_escapes() -> None:
    text = '[tooling.a]\ncommand = "${BIN}"\nargs = ["${MISSING:-fallback}", "$$HOME", "${AGENT_HOST_PYTHON}"]\n'
    tooling = stdio(parse_config(text, Path("c.toml"), {"BIN": "/usr/bin/srv"}).toolings["a"])
    assert tooling.command == "/usr/bin/srv"
    assert tooling.args == ("fallback", "$HOME", sys.executable)


def test_an_unset_variable_names_the_key_and_the_variable() -> None:
    message = error_of('[tooling.r]\nurl = "http://127.0.0.1/mcp"\nheaders = { Authorization = "Bearer ${TOKEN}" }\n')
    assert "agent-host.toml: tooling.r.headers.Authorization: environment variable TOKEN is not set" in message
    assert "${TOKEN:-default}" in message


def test_invalid_toml_names_the_file_and_the_position() -> None:
    message = error_of('[tooling.a]\ncommand = "unterminated\n')
    assert message.startswith("/etc/agent/agent-host.toml: invalid TOML:")
    assert "line 2" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tooling.a]\ncomand = "x"\n', "tooling.a.comand: unknown key"),
        ('[tools.a]\ncommand = "x"\n', "tools: unknown key"),
        (
            '[tooling.a]\ncommand = "x"\nargs = "-y"\n',
            "tooling.a.args: expected a list of strings, got a string ('-y')",
        ),
        ("[tooling.a]\ncommand = 3\n", "tooling.a.command: expected a string, got an integer (3)"),
        ("[tooling.a]\nargs = []\n", "tooling.a: a stdio tooling needs `command`"),
        ('[tooling.a]\ntransport = "http"\n', 'tooling.a: transport = "http" needs `url`'),
        ('[tooling.a]\nurl = "ftp://x"\n', "tooling.a.url: expected an http:// or https:// URL, got 'ftp://x'"),
        (
            '[tooling.a]\ntransport = "ws"\ncommand = "x"\n',
            'tooling.a.transport: expected "stdio" or "http", got \'ws\'',
        ),
        ('[tooling.a]\ncommand = "x"\ntimeout = 0\n', "tooling.a.timeout: expected a number of seconds > 0, got 0"),
        ('[tooling.a]\ncommand = "x"\nkind = "rpc"\n', "tooling.a.kind: expected one of mcp, python, mock, got 'rpc'"),
        (
            '[tooling.a]\nurl = "http://h/mcp"\ncommand = "x"\ntransport = "http"\n',
            'tooling.a.command: applies only to transport = "stdio"',
        ),
        ('[tooling.a]\ncommand = "x"\nheaders = {}\n', '`url` and `headers` apply only to transport = "http"'),
        ('[agents.w]\ntoolings = ["nope"]\n', "agents.w: names tooling 'nope', which is not defined"),
        (
            '[agents.w]\nmemory = "lots"\n',
            "agents.w.memory: expected a size such as \"256MiB\" or a number of bytes, got 'lots'",
        ),
        ("tooling = 3\n", "tooling: expected a table, got an integer (3)"),
    ],
)
def test_mistakes_name_the_key_path_and_what_is_expected(text: str, expected: str) -> None:
    message = error_of(text)
    assert message.startswith("/etc/agent/agent-host.toml: ")
    assert expected in message


def test_python_and_mock_toolings_have_their_own_keys(tmp_path: Path) -> None:
    text = """
[tooling.py]
kind = "python"
tools = ["mytools:search", "mytools"]
path = ["src"]
capabilities = { "search" = ["read_only", "network"] }

[tooling.fake]
kind = "mock"
[[tooling.fake.tools]]
name = "search"
input_schema = { type = "object", required = ["q"] }
results = [{ text = "one" }, { error = "two", delay = 0.5 }, { structured = { n = 3 }, progress = 2 }]
[[tooling.fake.resources]]
uri = "mock://doc"
text = "hello"
[[tooling.fake.updates]]
after = 0.25
resource = "mock://doc"
text = "changed"
"""
    config = parse_config(text, tmp_path / "agent-host.toml", {})
    python = config.toolings["py"]
    assert isinstance(python, PythonToolingConfig)
    assert (python.kind, python.tools, python.path) == ("python", ("mytools:search", "mytools"), (tmp_path / "src",))
    assert python.capabilities == {"search": ("read_only", "network")}
    fake = config.toolings["fake"]
    assert isinstance(fake, MockToolingConfig)
    mock = fake.mock
    assert [r.text or r.error or dict(r.structured or {}) for r in mock.tools[0].results] == ["one", "two", {"n": 3}]
    assert mock.tools[0].results[1].delay == 0.5 and mock.tools[0].results[2].progress == 2
    assert mock.resources[0].name == "mock://doc" and mock.updates[0].after == 0.25


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tooling.p]\nkind = "python"\n', 'tooling.p.tools: a python tooling needs tools = ["module:attribute", ...]'),
        ('[tooling.p]\nkind = "python"\ntools = ["a b"]\n', 'tooling.p.tools[0]: expected "module" or'),
        ('[tooling.p]\nkind = "python"\ntools = ["m"]\ncommand = "x"\n', "tooling.p.command: unknown key"),
        (
            '[tooling.m]\nkind = "mock"\n[[tooling.m.tools]]\ndescription = "x"\n',
            "tooling.m.tools[0]: a mock tool needs `name`",
        ),
        (
            '[tooling.m]\nkind = "mock"\n[[tooling.m.tools]]\nname = "t"\nresults = [{ text = "a", error = "b" }]\n',
            "tooling.m.tools[0].results[0]: a result needs exactly one of text, structured, error, content",
        ),
        (
            '[tooling.m]\nkind = "mock"\n[[tooling.m.resources]]\nuri = "u"\n',
            "tooling.m.resources[0]: a mock resource needs exactly one of `text` and `blob`",
        ),
        (
            '[tooling.m]\nkind = "mock"\n[[tooling.m.updates]]\nafter = 1\n',
            "tooling.m.updates[0]: an update needs exactly one of",
        ),
        (
            '[tooling.a]\ncommand = "x"\ncapabilities = { "*" = ["fly"] }\n',
            "tooling.a.capabilities.*[0]: unknown capability 'fly'",
        ),
        (
            '[tooling.a]\ncommand = "x"\n[agents.w]\ntoolings = ["a"]\nrequire_approval = ["write"]\n',
            "agents.w.require_approval[0]: unknown capability 'write'",
        ),
    ],
)
def test_kind_and_capability_mistakes_name_their_key(text: str, expected: str) -> None:
    assert expected in error_of(text)


def test_a_missing_file_suggests_config_init(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file") as caught:
        load_config(tmp_path / "absent.toml")
    assert caught.value.hint is not None and "config init" in caught.value.hint


def test_the_embedded_default_runs_the_bundled_server_with_the_hosts_python() -> None:
    demo = stdio(default_config().toolings["demo"])
    assert demo.command == sys.executable
    assert demo.args == ("-m", "agent_host.demo_server")
    assert default_config().source is None


def test_the_starter_file_is_commented_valid_toml_that_loads(tmp_path: Path) -> None:
    text = starter_config_text()
    assert text.startswith("# agent-host configuration")
    assert "# [tooling.files]" in text
    tomllib.loads(text)
    config = parse_config(text, tmp_path / "agent-host.toml", {})
    assert stdio(config.toolings["demo"]).args == ("-m", "agent_host.demo_server")
    assert stdio(config.toolings["demo"]).command == sys.executable
    assert config.agents == {}
    assert "# [agents.scout]" in text
    with_guests = parse_config(starter_config_text([("demo", "guests/demo")]), tmp_path / "agent-host.toml", {})
    assert with_guests.agents["demo"].component == tmp_path / "guests" / "demo"
    assert with_guests.agents["demo"].toolings == ("demo",)


def test_config_file_lookup_prefers_flag_then_environment_then_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_HOST_CONFIG", raising=False)
    assert find_config_file(None, tmp_path) is None
    (tmp_path / "agent-host.toml").write_text("")
    assert find_config_file(None, tmp_path) == tmp_path / "agent-host.toml"
    monkeypatch.setenv("AGENT_HOST_CONFIG", "/from/env.toml")
    assert find_config_file(None, tmp_path) == Path("/from/env.toml")
    assert find_config_file("flag.toml", tmp_path) == Path("flag.toml")


@pytest.mark.parametrize(
    ("text", "size"),
    [("256MiB", 256 << 20), ("1GiB", 1 << 30), ("512MB", 512_000_000), ("4096", 4096), ("1.5KiB", 1536)],
)
def test_sizes_parse_with_units(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_unreadable_sizes_are_none() -> None:
    assert parse_size("12 parsecs") is None


def test_the_host_table_sets_limits_and_checks_they_fit_the_inbox() -> None:
    config = parse_config(
        "[host]\ninbox_size = 40\nmax_open_calls = 10\nmax_subscriptions = 20\nrecv_timeout = 5\n", Path("c.toml"), {}
    )
    assert (config.host.inbox_size, config.host.max_open_calls, config.host.max_subscriptions) == (40, 10, 20)
    assert config.host.recv_timeout == 5.0
    message = error_of("[host]\ninbox_size = 100\nmax_open_calls = 100\n")
    assert "host.inbox_size: 100 is too small: 100 open calls (2 envelopes each) and 256 subscriptions" in message
    assert "host.max_open_calls: expected a whole number >= 1, got 0" in error_of("[host]\nmax_open_calls = 0\n")


def test_protocol_and_connect_timeout_are_per_tooling() -> None:
    text = '[tooling.a]\ncommand = "x"\nprotocol = "2025-11-25"\nconnect_timeout = 5\n'
    tooling = stdio(parse_config(text, Path("c.toml"), {}).toolings["a"])
    assert (tooling.protocol, tooling.connect_timeout, tooling.timeout) == ("2025-11-25", 5.0, 30.0)
    assert 'tooling.a.protocol: expected "auto" or "2025-11-25", got \'2026\'' in error_of(
        '[tooling.a]\ncommand = "x"\nprotocol = "2026"\n'
    )


def test_agents_take_preopened_dirs_environment_and_allow_lists(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    text = """
[tooling.files]
command = "x"

[agents.a]
toolings = ["files"]
resources = { files = ["file:///data/*"] }
cpu_time = 5
dirs = [{ host = "data", guest = "/data" }, { host = ".", guest = "/work", writable = true }]
env = { MODE = "${MODE:-fast}" }
"""
    agent = parse_config(text, tmp_path / "agent-host.toml", {}).agents["a"]
    assert [(d.host, d.guest, d.writable) for d in agent.dirs] == [
        (tmp_path / "data", "/data", False),
        (tmp_path, "/work", True),
    ]
    assert agent.env == {"MODE": "fast"} and agent.cpu_time == 5.0
    assert agent.resources == {"files": ("file:///data/*",)}


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ('dirs = [{ host = "missing", guest = "/m" }]', "agents.a.dirs[0].host:"),
        ('dirs = [{ host = "/tmp", guest = "relative" }]', "agents.a.dirs[0].guest: expected an absolute path"),
        ('dirs = [{ host = "." }]', "agents.a.dirs[0]: needs `host`"),
        ('dirs = [{ host = ".", guest = "/x", mode = "rw" }]', "agents.a.dirs[0].mode: unknown key"),
        (
            'dirs = [{ host = "/tmp", guest = "/x", writable = "yes" }]',
            "agents.a.dirs[0].writable: expected true or false",
        ),
        (
            'tools = { web = ["*"] }',
            "agents.a.tools.web: an allow-list for tooling 'web', which the agent is not granted",
        ),
        ("cpu_time = -1", "agents.a.cpu_time: expected a number of seconds > 0"),
    ],
)
def test_agent_mistakes_name_their_key(agent: str, expected: str) -> None:
    text = '[tooling.files]\ncommand = "x"\n[tooling.web]\ncommand = "y"\n[agents.a]\ntoolings = ["files"]\n' + agent
    assert expected in error_of(text)


def test_the_host_table_takes_limits_and_the_audit_log() -> None:
    text = '[host]\nmemory = "1GiB"\ncpu_time = 2\ntimeout = 10\nmax_argument_bytes = "4KiB"\n'
    text += 'max_result_bytes = 100\naudit_log = "logs/audit.jsonl"\naudit_arguments = true\n'
    host = parse_config(text, Path("/srv/agent-host.toml"), {}).host
    assert (host.memory, host.cpu_time, host.timeout) == (2**30, 2.0, 10.0)
    assert (host.max_argument_bytes, host.max_result_bytes) == (4096, 100)
    assert host.audit_log == Path("/srv/logs/audit.jsonl") and host.audit_arguments is True
