"""`make bench`: what one more running guest costs in memory, with `GUESTS` guests in one host.

Run in a fresh process (`python -m tests.bench.memory GUEST_WASM`), so the figures are this host's
alone: the resident set (RSS, from /proc) after one warm-up run, then with `GUESTS` guests running
at once (each waiting in its inbox), and `instantiate only`: the same number of instances created
but never run (the floor wasmtime's copy-on-write memory images give). Prints JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Final

from wasmtime import Store, WasiConfig

from agent_host.app.host import Host
from agent_host.config import parse_config

GUESTS: Final = 50
HOLD_MS: Final = 4000
"""How long each guest waits in its inbox; the figure is read while all of them wait."""


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure(wasm: Path) -> dict[str, float]:
    with Host(parse_config("", Path.cwd() / "bench.toml")) as host:
        outcome = host.run(wasm, "", agent="warm-up", policy=host.policy("warm-up"))
        assert outcome.status == "ok", outcome
        base = rss_mib()
        component = host.runtime.load(wasm)
        stores = []
        for _ in range(GUESTS):
            store = Store(host.runtime.engine)
            store.set_wasi(WasiConfig())
            store.set_epoch_deadline(1 << 40)
            host.runtime.instantiate(store, component)
            stores.append(store)
        instantiated = rss_mib()
        for store in stores:
            store.close()
        stores.clear()
        base_running = rss_mib()
        guests = [host.start(wasm, str(HOLD_MS), agent=f"g{i}", policy=host.policy(f"g{i}")) for i in range(GUESTS)]
        time.sleep(HOLD_MS / 2000)
        running = rss_mib()
        outcomes = [guest.join() for guest in guests]
        assert all(o is not None and o.status == "ok" for o in outcomes), outcomes
    return {
        "base_mib": base,
        "instantiate_mib_per_guest": (instantiated - base) / GUESTS,
        "running_mib_per_guest": (running - base_running) / GUESTS,
    }


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]))))
