"""A component importing what the host does not link is refused at load, naming the imports and
the flag that avoids them, and `config check` says the same, instead of wasmtime's "resource
implementation is missing" at instantiation.

The component is the smallest that imports `wasi:http` as a componentize-js build with its default
features does (written as WAT: no toolchain, no compile worth the name).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from agent_host import Host, default_config
from agent_host.errors import ComponentError, ExitCode
from tests.support import in_process
from tests.support.component import granted

pytestmark = pytest.mark.component

WEB = """(component
  (import "agent-host:guest/tooling@0.2.0" (instance))
  (import "wasi:io/poll@0.2.12" (instance))
  (import "wasi:http/types@0.2.10" (instance))
  (import "wasi:http/outgoing-handler@0.2.10" (instance))
)"""


def test_a_component_importing_wasi_http_is_named_with_the_flag_that_avoids_it(tmp_path: Path) -> None:
    wasm = tmp_path / "web.wasm"
    wasm.write_bytes(bytes(wasmtime.wat2wasm(WEB)))
    with Host(default_config()) as host, pytest.raises(ComponentError) as refused:
        host.run(wasm, "", agent="web", policy=granted(host, "web"))
    assert "imports wasi:http/types@0.2.10, wasi:http/outgoing-handler@0.2.10, which agent-host does not provide" in (
        refused.value.message
    )
    assert refused.value.hint is not None and "--disable http fetch-event" in refused.value.hint
    (tmp_path / "agent-host.toml").write_text(f'[agents.web]\ncomponent = "{wasm}"\n')
    checked = in_process.run("config", "check", cwd=tmp_path)
    assert checked.returncode == ExitCode.USAGE_ERROR
    assert "problem: [agents.web] component: component" in checked.stderr and "wasi:http/types" in checked.stderr
