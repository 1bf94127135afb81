"""The value shapes of `runtime.wit_values` agree with wasmtime's own reading of our WIT.

Explicit variant/result shapes: tagged only when ambiguous; both shapes tested. Reads the import
types of the built probe component.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from wasmtime.component import ComponentInstanceType, FuncType, OptionType, RecordType, ResultType, VariantType

from agent_host._support.paths import cache_dir
from agent_host.operations import interface
from agent_host.runtime.engine import Runtime

pytestmark = pytest.mark.component

TAGGED_RESULTS = {"[method]tooling.call-tool-blocking", "[method]tooling.read-resource"}


def functions(instance: object, runtime: Runtime) -> dict[str, FuncType]:
    assert isinstance(instance, ComponentInstanceType)
    found = {}
    for name, extern in instance.exports(runtime.engine).items():
        ty = extern.ty
        if isinstance(ty, FuncType):
            found[name] = ty
    return found


def test_result_and_option_shapes_match_the_table(probe_wasm: Path) -> None:
    with Runtime(cache_dir()) as runtime:
        component = runtime.load(probe_wasm)
        imports = {name: extern.ty for name, extern in component.type.imports(runtime.engine).items()}
        tooling = functions(imports[interface("tooling")], runtime)
        results = {name: f.result for name, f in tooling.items() if isinstance(f.result, ResultType)}
        assert len(results) == 10  # 0.2.0 added respond: result<_, error>, untagged
        for name, result in results.items():
            assert isinstance(result, ResultType)
            assert result._tagged() == (name in TAGGED_RESULTS), name
        recv = functions(imports[interface("inbox")], runtime)["recv"].result
        assert isinstance(recv, OptionType) and not recv._tagged()
        envelope = recv.payload
        assert isinstance(envelope, RecordType)
        event = dict(envelope.fields)["event"]
        assert isinstance(event, VariantType) and event._tagged()
        run = component.type.exports(runtime.engine)["run"].ty
        assert isinstance(run, FuncType)
        assert isinstance(run.result, ResultType) and run.result._tagged()
