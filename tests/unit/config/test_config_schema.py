"""The JSON Schema of the config file: what `agent-host config schema` prints for editors.

Editors complete and check `agent-host.toml` with it through a `#:schema` line; it accepts the starter
files and the documented example and rejects what the loader rejects.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agent_host.cli import main
from agent_host.config import json_schema, parse_config, starter_config_text
from agent_host.errors import ConfigError

CONFIGURATION_PAGE = Path(__file__).parents[3] / "docs" / "operators" / "configuration.md"


def errors_of(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(json_schema())
    return [f"{'.'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(document)]


def test_the_schema_is_a_valid_draft_07_schema_with_its_references_inside() -> None:
    schema = json_schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    references = set(re.findall(r'"\$ref": "#/definitions/(\w+)"', json.dumps(schema)))
    assert references and references <= set(schema["definitions"])


def test_the_schema_accepts_the_starter_files_and_the_documented_example() -> None:
    assert errors_of(tomllib.loads(starter_config_text())) == []
    assert errors_of(tomllib.loads(starter_config_text([("demo", "guests/demo")]))) == []
    example = re.search(r"# Configuration.*?```toml\n(.*?)```", CONFIGURATION_PAGE.read_text(encoding="utf-8"), re.S)
    assert example is not None
    assert errors_of(tomllib.loads(example.group(1))) == []


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('[tooling.a]\ncommand = "x"\ncomand = "y"\n', "tooling.a"),
        ("[host]\nretries = 3\n", "host"),
        ('[agents.a]\ncomponent = "x.wasm"\nmode = "fast"\n', "agents.a"),
        ('[tooling.h]\nurl = "http://h/mcp"\ncommand = "x"\n', "tooling.h"),
        ('[agents."my agent"]\n', "agents"),
        ('[host]\nmemory = "lots"\n', "host.memory"),
        ('[tooling.a]\ncommand = "x"\ntimeout = 0\n', "tooling.a"),
    ],
)
def test_the_schema_rejects_what_the_loader_rejects(text: str, path: str) -> None:
    problems = errors_of(tomllib.loads(text))
    assert problems and all(problem.startswith(path) for problem in problems), problems
    with pytest.raises(ConfigError, match="agent-host.toml"):
        parse_config(text, Path("agent-host.toml"), {})


def test_the_schema_describes_every_key_for_an_editor() -> None:
    tooling = json_schema()["definitions"]["StdioToolingConfig"]["properties"]
    assert tooling["command"]["description"] == "The program to start."
    assert tooling["timeout"] == {
        "default": 30.0,
        "description": "Seconds per request; the request is cancelled after it (for an asynchronous tool call: "
        "after\nthat long without progress, see `progress_resets_timeout`).",
        "exclusiveMinimum": 0,
        "type": "number",
    }
    assert tooling["transport"]["enum"] == ["stdio"]
    assert "null" not in json.dumps(json_schema()) and "const" not in json.dumps(json_schema())


def test_config_schema_prints_the_schema_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "schema"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == json_schema() and err == ""
