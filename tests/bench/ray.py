"""`make bench`, Ray: `AGENTS` short agents on the local executor and on a local Ray, in the same run.

A short agent is the probe guest making one `echo` call on a mock tooling (`call`), or no call
(`empty`). Local: `runs.run_all` on one new `Host`. Ray: `RayExecutor.run_all` on a local Ray, at
`[host] ray_cpus` 1 (one actor per CPU) and 0.5; shipping, actor starts and closes included, as in
`agent-host run --executor ray`. Rounds interleaved (local, Ray, ...), medians of `ROUNDS`; every
outcome must be `ok` with no failed step. Ray's fixed costs apart: starting the local Ray, the first
agent on it, the actor pool (`pool` agents, one per actor: each `run_all` pays it) and the shutdown;
the steady rate is what the other agents add: (AGENTS - pool) / (t(AGENTS) - t(pool)).
Run alone: `python -m tests.bench.ray`. Kept for the performance page as module `ray` (`tests.bench.record`).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_host._support.stopping import StopToken
from agent_host.app import runs
from agent_host.app.host import Host
from agent_host.cluster.connection import Cluster, ray_cluster
from agent_host.cluster.executor import RayExecutor
from agent_host.components.build import build_guest
from agent_host.config import Config, parse_config
from tests.bench.record import Run, Table, record
from tests.support.component import PROBE

AGENTS: Final = 200
ROUNDS: Final = 3
CALL: Final = json.dumps(
    {"steps": [{"op": "get", "tooling": "t", "as": "t"}, {"op": "call_blocking", "h": "t", "tool": "echo",
                                                              "args": json.dumps({"text": "hi"})}]}
)  # fmt: skip
EMPTY: Final = json.dumps({"steps": []})
INPUTS: Final = {"call": CALL, "empty": EMPTY}
RAY_CPUS: Final = ((1.0, "call"), (0.5, "call"), (1.0, "empty"))
"""The Ray variants measured: (`[host] ray_cpus`, input)."""


@dataclass(frozen=True)
class Times:
    """Medians of one variant, in seconds: all agents, the pool alone, one agent's own run."""

    wall: float
    pool: float = 0.0
    agent: float = 0.0


def config_text(ray_cpus: float) -> str:
    """`AGENTS` probe agents granted a mock tooling `t` whose `echo` always answers."""
    lines = [
        f"[host]\nray_cpus = {ray_cpus}\n",
        '[tooling.t]\nkind = "mock"\n[[tooling.t.tools]]\nname = "echo"\nrepeat_last = true\n'
        'results = [{ text = "hi" }]\n',
    ]
    component = json.dumps(str(PROBE))
    lines += [f'[agents.a{n:03}]\ncomponent = {component}\ntoolings = ["t"]\n' for n in range(AGENTS)]
    return "".join(lines)


def check(finished: Sequence[runs.Finished], count: int, where: str) -> float:
    """Assert every outcome is `ok` and every step answered; the median of the guests' own durations."""
    assert len(finished) == count, (where, len(finished))
    for done in finished:
        outcome = done.outcome
        assert outcome.status == "ok" and done.failure is None, (where, outcome)
        assert all("ok" in step for step in json.loads(outcome.text)), (where, outcome)
    return statistics.median(done.outcome.duration for done in finished)


def local(config: Config, prepared: Sequence[runs.AgentRun]) -> tuple[float, float]:
    """Seconds for a new host to run every agent (and close), and the median agent's own duration."""
    started = time.perf_counter()
    with Host(config) as host:
        finished = runs.run_all(host, prepared)
    wall = time.perf_counter() - started
    return wall, check(finished, len(prepared), "local")


def on_ray(config: Config, cluster: Cluster, prepared: Sequence[runs.AgentRun]) -> tuple[float, float]:
    """Seconds for a new executor to run every agent on the cluster, and the median agent's own duration."""
    started = time.perf_counter()
    finished = RayExecutor(config, cluster).run_all(prepared)
    wall = time.perf_counter() - started
    return wall, check(finished, len(prepared), f"ray, ray_cpus {config.host.ray_cpus}")


@dataclass(frozen=True)
class Figures:
    local: dict[str, Times]
    ray: dict[tuple[float, str], Times]
    pools: dict[float, int]
    start: float
    first: float
    shutdown: float


def measure() -> Figures:
    build_guest(PROBE)
    configs = {cpus: parse_config(config_text(cpus), Path.cwd() / "bench.toml") for cpus, _ in RAY_CPUS}
    stop = StopToken()
    agents = runs.select_agents(configs[1.0], [])
    prepared = {name: runs.prepare(agents, text, stop) for name, text in INPUTS.items()}
    samples: dict[object, list[tuple[float, float]]] = {}
    pools: dict[float, int] = {}
    started = time.perf_counter()
    with ray_cluster(None, stop) as cluster:
        start = time.perf_counter() - started
        first, _ = on_ray(configs[1.0], cluster, prepared["call"][:1])
        for _ in range(ROUNDS):
            for name in INPUTS:
                samples.setdefault(name, []).append(local(configs[1.0], prepared[name]))
            for cpus, name in RAY_CPUS:
                config = configs[cpus]
                pool = pools[cpus] = RayExecutor(config, cluster).pool_size
                samples.setdefault((cpus, name), []).append(on_ray(config, cluster, prepared[name]))
                samples.setdefault((cpus, name, "pool"), []).append(on_ray(config, cluster, prepared[name][:pool]))
        closing = time.perf_counter()
    shutdown = time.perf_counter() - closing

    def median(key: object, index: int = 0) -> float:
        return statistics.median(sample[index] for sample in samples[key])

    return Figures(
        local={name: Times(median(name), agent=median(name, 1)) for name in INPUTS},
        ray={
            (cpus, name): Times(median((cpus, name)), median((cpus, name, "pool")), median((cpus, name), 1))
            for cpus, name in RAY_CPUS
        },
        pools=pools,
        start=start,
        first=first,
        shutdown=shutdown,
    )


def main() -> int:
    run = Run("ray")
    f = measure()
    rows = [
        [f"local, one host: {name}", f"{times.wall:.2f} s", f"{AGENTS / times.wall:,.0f}", "1.00x", "-", "-",
         f"{times.agent * 1000:.1f} ms"]
        for name, times in f.local.items()
    ]  # fmt: skip
    for (cpus, name), times in f.ray.items():
        base = f.local[name].wall
        pool = f.pools[cpus]
        steady = (AGENTS - pool) / (times.wall - times.pool)
        rows.append([
            f"Ray, ray_cpus {cpus:g} ({pool} actors): {name}", f"{times.wall:.2f} s", f"{AGENTS / times.wall:,.0f}",
            f"{times.wall / base:.2f}x", f"{(times.wall - base) / AGENTS * 1000:+.1f} ms", f"{steady:,.0f}",
            f"{times.agent * 1000:.1f} ms",
        ])  # fmt: skip
    agents = Table(
        [f"{AGENTS} agents (probe guest)", "wall time", "agents/s", "ratio to local", "Ray's overhead per agent",
         "steady agents/s (past the pool)", "median agent's own run"],
        rows,
    )  # fmt: skip
    fixed = [
        ["starting a local Ray (`ray_cluster(None, ...)`)", f"{f.start:.2f} s"],
        ["then one agent on it: shipping, the first actor and its host, closing", f"{f.first:.2f} s"],
        *[[f"the pool, ray_cpus {cpus:g}: {f.pools[cpus]} agents, one per actor ({name})", f"{times.pool:.2f} s"]
          for (cpus, name), times in f.ray.items()],
        ["shutting the local Ray down", f"{f.shutdown:.2f} s"],
    ]  # fmt: skip
    raw = {
        "local": {name: vars(times) for name, times in f.local.items()},
        "ray": {f"{cpus:g} {name}": vars(times) for (cpus, name), times in f.ray.items()},
        "pools": {f"{cpus:g}": size for cpus, size in f.pools.items()},
        "start": f.start, "first": f.first, "shutdown": f.shutdown,
    }  # fmt: skip
    record(run, [agents, Table(["Ray's fixed costs", "time"], fixed)], raw)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
