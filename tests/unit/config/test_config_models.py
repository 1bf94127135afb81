"""Config as pydantic models: every problem of a file in one error, one model per tooling kind and
transport, names and origins from the file, free JSON kept verbatim, and the package's imports.

The models are frozen with `extra="forbid"`, a discriminated union per kind and transport; `${VAR}`
expansion is a pass over the raw tree, and one formatter names every problem.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pydantic
import pytest

from agent_host.config import (
    HttpToolingConfig,
    MockToolingConfig,
    StdioToolingConfig,
    default_config,
    parse_config,
    starter_config_text,
)
from agent_host.config.starter import starter_template
from agent_host.errors import ConfigError

FILE = Path("/etc/agent/agent-host.toml")


def error_of(text: str, env: dict[str, str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, FILE, env or {})
    return caught.value


def test_a_file_with_three_mistakes_gets_one_error_naming_all_three() -> None:
    error = error_of(
        '[host]\nmemory = "lots"\n[tooling.a]\ncommand = "x"\ncomand = "y"\n[agents.w]\ntoolings = ["b"]\n'
    )
    lines = [line for line in str(error).splitlines() if not line.startswith("  hint: ")]
    assert lines == [
        f"{FILE}: host.memory: expected a size such as \"256MiB\" or a number of bytes, got 'lots'",
        f"{FILE}: tooling.a.comand: unknown key",
        f"{FILE}: agents.w: names tooling 'b', which is not defined",
    ]
    assert "  hint: known keys here: args, capabilities, command," in str(error)
    assert "  hint: add a [tooling.b] table or remove it; defined: a" in str(error)
    assert error.hint is None


def test_a_single_mistake_keeps_its_hint_on_the_error() -> None:
    error = error_of('[tooling.a]\ncommand = "x"\nretries = 3\n')
    assert error.message == f"{FILE}: tooling.a.retries: unknown key"
    assert error.hint is not None and error.hint.startswith("known keys here: args, capabilities, command")


def test_unset_variables_and_invalid_values_are_reported_together() -> None:
    message = str(error_of('[tooling.a]\ncommand = "${BIN}"\ntimeout = 0\nargs = ["${ARG}"]\n'))
    assert f"{FILE}: tooling.a.command: environment variable BIN is not set" in message
    assert f"{FILE}: tooling.a.args[0]: environment variable ARG is not set" in message
    assert f"{FILE}: tooling.a.timeout: expected a number of seconds > 0, got 0" in message


def test_every_item_of_a_list_is_checked() -> None:
    message = str(error_of('[tooling.a]\ncommand = "x"\nargs = [1, "ok", true]\n'))
    assert "tooling.a.args[0]: expected a string, got an integer (1)" in message
    assert "tooling.a.args[2]: expected a string, got a boolean (True)" in message
    assert "args[1]" not in message


def test_a_tooling_that_is_not_a_table_is_named() -> None:
    assert str(error_of("[tooling]\na = 3\n")) == f"{FILE}: tooling.a: expected a table, got an integer (3)"


def test_a_dirs_entry_that_is_not_a_table_shows_an_example() -> None:
    error = error_of('[agents.a]\ndirs = ["data"]\n')
    assert error.message == f"{FILE}: agents.a.dirs[0]: expected a table, got a string ('data')"
    assert error.hint == 'e.g. { host = "./data", guest = "/data" }'


@pytest.mark.parametrize("name", ["mcp", "stdio", "python", "a.b"])
def test_a_tooling_named_like_a_kind_or_transport_is_still_named_by_its_key(name: str) -> None:
    message = str(error_of(f'[tooling."{name}"]\ncomand = "x"\n'))
    assert message.splitlines()[0] == f"{FILE}: tooling.{name}: a stdio tooling needs `command`"
    assert f"{FILE}: tooling.{name}.comand: unknown key" in message


def test_an_mcp_tooling_is_either_stdio_or_http_and_has_only_its_own_keys() -> None:
    config = parse_config(
        '[tooling.s]\ncommand = "x"\n[tooling.h]\nurl = "https://h/mcp"\n[tooling.m]\nkind = "mock"\n', FILE, {}
    )
    stdio, http, mock = config.toolings["s"], config.toolings["h"], config.toolings["m"]
    assert isinstance(stdio, StdioToolingConfig) and isinstance(http, HttpToolingConfig)
    assert isinstance(mock, MockToolingConfig)
    assert not hasattr(stdio, "url") and not hasattr(stdio, "headers")
    assert not hasattr(http, "command") and not hasattr(http, "args")
    assert "transport" not in MockToolingConfig.model_fields and mock.connect_timeout == 30.0


def test_names_and_origins_come_from_the_file_not_from_keys() -> None:
    config = parse_config('[tooling.t]\ncommand = "x"\n[agents.a]\ntoolings = ["t"]\n', FILE, {})
    assert (config.toolings["t"].name, config.toolings["t"].origin) == ("t", f"{FILE} [tooling.t]")
    assert (config.agents["a"].name, config.agents["a"].origin) == ("a", f"{FILE} [agents.a]")
    assert config.host.origin == f"{FILE} [host]"
    assert config.source == FILE and config.describe_source() == str(FILE)
    assert "tooling.t.name: unknown key" in str(error_of('[tooling.t]\ncommand = "x"\nname = "u"\n'))
    assert "agents.a.origin: unknown key" in str(error_of('[agents.a]\norigin = "elsewhere"\n'))


def test_the_embedded_default_names_itself() -> None:
    config = default_config()
    assert config.toolings["demo"].origin == "embedded default [tooling.demo]"
    assert config.host.origin == "embedded default [host]"
    assert config.source is None and config.describe_source() == "the embedded default configuration"


def test_models_are_frozen() -> None:
    config = parse_config('[tooling.t]\ncommand = "x"\n', FILE, {})
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        config.toolings["t"].timeout = 1.0


def test_free_json_in_a_mock_script_is_kept_verbatim() -> None:
    text = """
[tooling.m]
kind = "mock"
[[tooling.m.tools]]
name = "t"
input_schema = { type = "object", description = "costs $$5 or ${PRICE}" }
results = [{ structured = { price = "$$5 ${PRICE}" } }, { text = "$$5 ${PRICE:-free}" }]
"""
    tooling = parse_config(text, FILE, {}).toolings["m"]
    assert isinstance(tooling, MockToolingConfig)
    tool = tooling.mock.tools[0]
    assert tool.input_schema["description"] == "costs $$5 or ${PRICE}"
    assert tool.results[0].structured == {"price": "$$5 ${PRICE}"}
    assert tool.results[1].text == "$5 free"


def test_relative_paths_are_resolved_against_the_files_folder(tmp_path: Path) -> None:
    text = '[host]\naudit_log = "a.jsonl"\n[tooling.p]\nkind = "python"\ntools = ["m"]\npath = ["src"]\n'
    text += '[tooling.s]\ncommand = "x"\ncwd = "srv"\n[agents.a]\ncomponent = "/abs/guest"\n'
    config = parse_config(text, tmp_path / "agent-host.toml", {})
    assert config.host.audit_log == tmp_path / "a.jsonl"
    python, stdio = config.toolings["p"], config.toolings["s"]
    assert not isinstance(python, StdioToolingConfig | HttpToolingConfig | MockToolingConfig)
    assert python.path == (tmp_path / "src",)
    assert isinstance(stdio, StdioToolingConfig) and stdio.cwd == tmp_path / "srv"
    assert config.agents["a"].component == Path("/abs/guest")


def test_the_starter_text_is_the_package_data_file_and_guests_replace_its_example() -> None:
    assert starter_config_text() == starter_template()
    with_guests = starter_config_text([("demo", "guests/demo"), ("scout", "guests/scout")])
    assert "# [agents.scout]" not in with_guests
    assert '[agents.demo]\ncomponent = "guests/demo"' in with_guests
    assert '[agents.scout]\ncomponent = "guests/scout"' in with_guests
    assert with_guests.startswith(starter_template().split("# A named agent")[0])


ALLOWED_IMPORTS = ("agent_host.config", "agent_host.errors", "pydantic", "pydantic_core", "tomli_w")


def test_the_config_package_imports_nothing_of_the_host_but_errors() -> None:
    folder = Path(__file__).parents[3] / "host" / "agent_host" / "config"
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                top = name.split(".")[0]
                allowed = name.startswith(ALLOWED_IMPORTS) or top in sys.stdlib_module_names
                assert allowed, f"{path.name} imports {name}"


def test_serve_names_only_agents_it_can_serve() -> None:
    """`[serve] agents` must name agents with a `component`; keys checked like every table."""
    config = parse_config('[agents.a]\ncomponent = "a.wasm"\n[serve]\nagents = ["a"]\nmax_concurrent = 3\n', FILE, {})
    assert (config.serve.agents, config.serve.max_concurrent) == (("a",), 3)
    assert (default_config().serve.agents, default_config().serve.max_concurrent) == (None, 8)
    typo = error_of("[serve]\nmax_concurent = 2\n")
    assert (typo.message, typo.hint) == (
        f"{FILE}: serve.max_concurent: unknown key",
        "known keys here: agents, allowed_hosts, audit_client_max, audit_client_rate, body_timeout, grace, grants, "
        "header_timeout, http, idle_timeout, listen_idle, log_buffer, max_body, max_concurrent, max_connections, "
        "max_connections_per_client, max_pending_answers, max_sessions, max_sessions_per_client, "
        "max_subscriptions_per_session, min_send_rate, queue, ready_instances, send_timeout, session_idle, tokens, "
        "toolings",
    )
    lines = str(error_of('[agents.a]\n[serve]\nagents = ["a", "b"]\n')).splitlines()
    assert lines == [
        f"{FILE}: serve.agents[0]: agent 'a' has no `component` and no `code`",
        '  hint: give [agents.a] a `component` (a guest folder or a .wasm file) or `code = "python"`',
        f"{FILE}: serve.agents[1]: names agent 'b', which is not defined",
        "  hint: add an [agents.b] table or remove it; defined agents: a",
    ]


def test_serve_binds_beyond_loopback_only_with_a_token() -> None:
    assert parse_config("", FILE, {}).serve.http == "127.0.0.1:8080"
    error = error_of('[serve]\nhttp = "0.0.0.0:8080"\n')
    assert error.message == f"{FILE}: serve.http: binding 0.0.0.0 (beyond this machine) needs a token"
    assert error.hint == 'set `tokens = ["${AGENT_HOST_TOKEN}"]` in [serve], or bind 127.0.0.1'
    ok = parse_config('[serve]\nhttp = "[::]:9000"\ntokens = ["${T}"]\n', FILE, {"T": "x"})
    assert (ok.serve.http, ok.serve.tokens) == ("[::]:9000", ("x",))
    assert error_of('[serve]\nhttp = "8080"\n').message == (
        f"{FILE}: serve.http: expected HOST:PORT such as 127.0.0.1:8080, got '8080'"
    )


@pytest.mark.parametrize("token", ["", " ", "\t ", " secret", "secret\n"])
def test_a_blank_token_or_one_with_spaces_around_it_is_refused_without_showing_it(token: str) -> None:
    """`tokens = [" "]` is refused by `config check`: no client can present such a token, since the
    header's value is stripped."""
    error = error_of('[serve]\ntokens = ["good", "${T}"]\n', {"T": token})
    assert error.message.startswith(f"{FILE}: serve.tokens[1]: "), error.message
    assert ("blank" in error.message) if not token.strip() else ("spaces" in error.message), error.message
    assert "hint: " in str(error) and (not token.strip() or token.strip() not in str(error))


def test_serve_toolings_are_defined_dotless_and_granted_and_grants_take_only_grant_keys() -> None:
    """`[serve] toolings` re-exported under `[serve] grants` (the keys of an agent's grants)."""
    tools = '[tooling.fs]\nkind = "mock"\n[tooling."a.b"]\nkind = "mock"\n[tooling.other]\nkind = "mock"\n'
    config = parse_config(tools + '[serve]\ntoolings = ["fs"]\ngrants = { tools = { fs = ["read_*"] } }\n', FILE, {})
    grants = config.serve.client_grants()
    assert (grants.name, grants.toolings, dict(grants.tools)) == ("serve", ("fs",), {"fs": ("read_*",)})
    assert grants.origin == f"{FILE} [serve] grants"
    assert parse_config(tools + '[serve]\ntoolings = ["fs"]\n', FILE, {}).serve.client_grants().toolings == ("fs",)
    lines = str(
        error_of(tools + '[serve]\ntoolings = ["fs", "a.b", "nope"]\ngrants = { toolings = ["other"], env = {} }\n')
    ).splitlines()
    assert lines == [
        f"{FILE}: serve.toolings[0]: tooling 'fs' is offered but not granted",
        '  hint: add "fs" to [serve] grants.toolings (or leave `toolings` out of grants)',
        f"{FILE}: serve.toolings[1]: tooling 'a.b' cannot be offered: its name has a '.'",
        "  hint: its tools are offered as TOOLING.TOOL: rename the [tooling] table without '.'",
        f"{FILE}: serve.toolings[2]: names tooling 'nope', which is not defined",
        "  hint: add a [tooling.nope] table or remove it; defined: a.b, fs, other",
        f"{FILE}: serve.grants.env: not a grant (it configures a guest)",
        "  hint: [serve] grants takes capabilities, elicitation, require_approval, resources, toolings, tools: "
        "what a remote client may do",
    ]


@pytest.mark.parametrize(
    ("auth", "expected"),
    [
        ('{ type = "oath" }', 'tooling.h.auth.type: expected "oauth" or "client_credentials", got \'oath\''),
        (
            '{ type = "client_credentials", client_secret = "s" }',
            'tooling.h.auth: type = "client_credentials" needs `client_id`',
        ),
        (
            '{ type = "oauth", client_id = "http://example.com/c.json" }',
            "tooling.h.auth.client_id: a client_id URL must be https://",
        ),
        (
            '{ type = "oauth", client_id = "https://example.com" }',
            "tooling.h.auth.client_id: a Client ID Metadata Document URL needs a path",
        ),
        (
            '{ type = "oauth", client_secret = "s" }',
            "tooling.h.auth.client_secret: client_secret needs a pre-registered client_id",
        ),
        ('{ type = "oauth", scope = "read" }', "tooling.h.auth.scope: unknown key"),
    ],
)
def test_a_wrong_auth_table_is_named_with_what_to_fix(auth: str, expected: str) -> None:
    """`auth = { type = "oauth" | "client_credentials", ... }` on HTTP toolings."""
    error = error_of(f'[tooling.h]\nurl = "https://h/mcp"\nauth = {auth}\n')
    assert f"{FILE}: {expected}" in str(error)


def test_auth_is_read_for_http_toolings_only_and_its_secret_is_never_shown() -> None:
    """The secret comes from ${VAR} and no repr of the config shows it."""
    auth = '{ type = "client_credentials", client_id = "bot", client_secret = "${S}" }'
    text = f'[tooling.h]\nurl = "https://h/mcp"\nauth = {auth}\n'
    config = parse_config(text, FILE, {"S": "hush-hush"})
    tooling = config.toolings["h"]
    assert isinstance(tooling, HttpToolingConfig) and tooling.auth is not None
    assert tooling.auth.type == "client_credentials" and tooling.auth.client_secret == "hush-hush"
    assert "hush-hush" not in repr(config)
    oauth = parse_config(
        '[tooling.h]\nurl = "https://h/mcp"\nauth = { type = "oauth", scopes = ["a", "b"] }\n', FILE, {}
    )
    assert oauth.toolings["h"].auth.scopes == ("a", "b")  # type: ignore[union-attr]
    stdio = error_of('[tooling.s]\ncommand = "x"\nauth = { type = "oauth" }\n')
    assert str(stdio) == f'{FILE}: tooling.s.auth: `auth` applies only to transport = "http"'


def test_max_pending_bytes_must_hold_one_call_of_the_largest_arguments(tmp_path: Path) -> None:
    """A bound below one call's arguments would refuse every call."""
    with pytest.raises(ConfigError) as caught:
        parse_config('[host]\nmax_pending_bytes = "1MiB"\n', tmp_path / "agent-host.toml")
    message = str(caught.value)
    assert "max_pending_bytes" in message and "is too small" in message
    assert "raise max_pending_bytes or lower max_argument_bytes" in message
