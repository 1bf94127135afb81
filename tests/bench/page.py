"""`make bench`'s last step: write `docs/performance.md` from the template and the modules' figures.

`python -m tests.bench.page` reads `tests/bench/performance.md.in` and replaces its markers:
`<!-- bench: machine -->` with the machine and the versions of this run (CPU model, cores, memory,
OS, Python, the key packages), `<!-- bench: MODULE N -->` with table N that module recorded
(`tests.bench.record`), preceded, at the module's first table, by when it ran, how long it took and
the load average. A module that recorded nothing (not run, or it failed) is said to be missing, and
the page is written all the same; a marker that names an unknown table fails.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import re
from pathlib import Path
from typing import Any, Final

from tests.bench.record import RESULTS, Table

ROOT: Final = Path(__file__).resolve().parents[2]
TEMPLATE: Final = Path(__file__).with_name("performance.md.in")
PAGE: Final = ROOT / "docs" / "performance.md"
MARKER: Final = re.compile(r"<!-- bench: (machine|([a-z_]+) (\d+)) -->")
PACKAGES: Final = (
    "agent-host",
    "wasmtime",
    "componentize-py",
    "mcp",
    "pydantic",
    "anyio",
    "uvicorn",
    "ray",
    "pydantic-monty",
)
MODULES: Final = {"calls": "tests.bench", "js": "tests.bench.js", "edit_run": "tests.bench.edit_run",
                  "serve": "tests.bench.serve", "ray": "tests.bench.ray",
                  "models": "tests.bench.models", "code_mode": "tests.bench.code_mode",
                  "telemetry": "tests.bench.telemetry"}  # fmt: skip
"""A module's name in the results -> the command that measures it."""
GENERATED: Final = "<!-- Written by `make bench` (tests/bench/page.py) from tests/bench/performance.md.in. -->\n"


def _first(path: str, key: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(rf"^{key}\s*[:=]\s*\"?(.+?)\"?\s*$", text, re.MULTILINE)
    return match.group(1) if match else None


def machine() -> list[tuple[str, str]]:
    """(what, value) rows describing this machine and the versions in use."""
    kib = _first("/proc/meminfo", "MemTotal")
    memory = f"{int(kib.split()[0]) / 2**20:.1f} GiB" if kib and kib.split()[0].isdigit() else "unknown"
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return [
        ("CPU", _first("/proc/cpuinfo", "model name") or platform.processor() or platform.machine()),
        ("cores", str(os.cpu_count())),
        ("memory", memory),
        ("OS", f"{_first('/etc/os-release', 'PRETTY_NAME') or platform.system()} ({platform.platform()})"),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("packages", ", ".join(versions)),
    ]


def _load(values: list[float]) -> str:
    return " / ".join(f"{value:.2f}" for value in values)


def _run_line(result: dict[str, Any]) -> str:
    return (
        f"*Measured {result['date']} in {result['seconds']:.0f} s; load average (1 / 5 / 15 min) "
        f"{_load(result['load_before'])} before, {_load(result['load_after'])} after.*\n\n"
    )


def render(template: str, results: dict[str, dict[str, Any]], rows: list[tuple[str, str]], now: str) -> str:
    """The page: `template` with its markers replaced (see the module's docstring)."""
    introduced: set[str] = set()

    def replace(match: re.Match[str]) -> str:
        if match.group(1) == "machine":
            table = Table(["machine", "this run"], [list(row) for row in rows])
            return f"Page written {now}.\n\n{table.markdown()}"
        module, index = match.group(2), int(match.group(3))
        if module not in MODULES:
            raise ValueError(f"{TEMPLATE.name}: unknown bench module {module!r}; known: {', '.join(MODULES)}")
        result = results.get(module)
        if result is None:
            command = f"python -m {MODULES[module]}"
            return f"*Not measured in this run: `{command}` records it, then `python -m tests.bench.page`.*"
        tables = result["tables"]
        if index >= len(tables):
            raise ValueError(f"{TEMPLATE.name}: module {module!r} recorded {len(tables)} tables, not table {index}")
        head = "" if module in introduced else _run_line(result)
        introduced.add(module)
        return head + Table(**tables[index]).markdown()

    return GENERATED + MARKER.sub(replace, template)


def main() -> int:
    results = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(RESULTS.glob("*.json"))}
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    PAGE.write_text(render(TEMPLATE.read_text(encoding="utf-8"), results, machine(), now), encoding="utf-8")
    missing = sorted(set(MODULES) - set(results))
    print(f"wrote {PAGE.relative_to(ROOT)}" + (f" (not measured: {', '.join(missing)})" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
