"""`make bench`: what one more running guest costs in memory, with `GUESTS` guests in one host, and
how long an instantiation takes.

Run in a fresh process (`python -m tests.bench.memory GUEST_WASM`), so the figures are this host's
alone, after one warm-up run: the proportional set size (PSS, from /proc/self/smaps_rollup: a page
shared by N mappings counts 1/N) and the resident set (RSS: every mapping of the shared memory image
counts the page again) with `GUESTS` guests running at once (each waiting in its inbox), and with
as many instances created but never run. Instantiation (a `Store` with WASI and limits, then
`Runtime.instantiate`: the host's memory creator mapping the image), median of `INSTANTIATIONS`,
beside the same component compiled for an engine with wasmtime's own allocator (its copy-on-write
images, no host-state memory limit) in the same process. Prints JSON.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Final

from wasmtime import Config, Engine, Store, WasiConfig
from wasmtime.component import Component, Linker

from agent_host.app.host import Host
from agent_host.config import parse_config
from agent_host.runtime import memory_limit
from agent_host.runtime.clock import ClockShim
from agent_host.runtime.imports import define_imports

GUESTS: Final = 50
HOLD_MS: Final = 4000
"""How long each guest waits in its inbox; the figure is read while all of them wait."""
INSTANTIATIONS: Final = 60


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def pss_mib() -> float:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no Pss in /proc/self/smaps_rollup")


def sizes() -> tuple[float, float]:
    return pss_mib(), rss_mib()


def instantiate_ms(engine: Engine, component: Component, instantiate: object) -> float:
    """Median milliseconds of a `Store` with WASI and limits, then `instantiate(store, component)`."""
    assert callable(instantiate)
    times = []
    for _ in range(INSTANTIATIONS):
        started = time.perf_counter()
        store = Store(engine)
        store.set_wasi(WasiConfig())
        store.set_epoch_deadline(1 << 40)
        store.set_limits(memory_size=-1 if memory_limit.INSTALLED_BY_DEFAULT else 256 << 20)
        with memory_limit.active(memory_limit.MemoryBudget(256 << 20)):
            instantiate(store, component)
        times.append(time.perf_counter() - started)
        store.close()
    return statistics.median(times) * 1e3


def wasmtime_own_ms(wasm: Path) -> float:
    """`instantiate_ms` of `wasm` compiled here for an engine with wasmtime's own allocator."""
    config = Config()
    config.epoch_interruption = True
    engine = Engine(config)
    component = Component(engine, wasm.read_bytes())
    linker = Linker(engine)
    define_imports(linker)
    ClockShim(engine).define(linker, component, engine)
    return instantiate_ms(engine, component, linker.instantiate)


def measure(wasm: Path) -> dict[str, float]:
    with Host(parse_config("", Path.cwd() / "bench.toml")) as host:
        outcome = host.run(wasm, "", agent="warm-up", policy=host.policy("warm-up"))
        assert outcome.status == "ok", outcome
        component = host.runtime.load(wasm)
        ours = instantiate_ms(host.runtime.engine, component, host.runtime.instantiate)
        base_pss, base_rss = sizes()
        stores = []
        for _ in range(GUESTS):
            store = Store(host.runtime.engine)
            store.set_wasi(WasiConfig())
            store.set_epoch_deadline(1 << 40)
            with memory_limit.active(memory_limit.MemoryBudget(256 << 20)):
                host.runtime.instantiate(store, component)
            stores.append(store)
        made_pss, made_rss = sizes()
        for store in stores:
            store.close()
        stores.clear()
        idle_pss, idle_rss = sizes()
        guests = [host.start(wasm, str(HOLD_MS), agent=f"g{i}", policy=host.policy(f"g{i}")) for i in range(GUESTS)]
        time.sleep(HOLD_MS / 2000)
        running_pss, running_rss = sizes()
        outcomes = [guest.join() for guest in guests]
        assert all(o is not None and o.status == "ok" for o in outcomes), outcomes
    return {
        "base_mib": base_rss,
        "instantiate_mib_per_guest": (made_pss - base_pss) / GUESTS,
        "instantiate_rss_mib_per_guest": (made_rss - base_rss) / GUESTS,
        "running_mib_per_guest": (running_pss - idle_pss) / GUESTS,
        "running_rss_mib_per_guest": (running_rss - idle_rss) / GUESTS,
        "instantiate_ms": ours,
        "instantiate_wasmtime_ms": wasmtime_own_ms(wasm),
    }


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]))))
