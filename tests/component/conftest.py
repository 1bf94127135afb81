"""Fixtures of the component tests, registered here; they and the helpers tests import (`probe`,
`ok`, `err`, `Server`, ...) live in `tests/support/component.py`."""

from tests.support.component import (
    demo_host,
    era,
    everything_bin,
    http_demo,
    make_host,
    probe_wasm,
    ray_head,
    toolchain,
)

__all__ = ["demo_host", "era", "everything_bin", "http_demo", "make_host", "probe_wasm", "ray_head", "toolchain"]
