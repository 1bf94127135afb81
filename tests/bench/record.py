"""What each `make bench` module measured, kept for the page: one JSON file per module.

A module's `main` builds its `Table`s, prints them (markdown, as before) and calls `record`, which
writes `RESULTS / MODULE.json`: the tables, the raw figures, when it ran, how long it took and the
machine's load average before and after (so the page can say how quiet the machine was).
`tests.bench.page` renders `docs/performance.md` from these files. `RESULTS` is `build/bench`
(gitignored), or `$AGENT_HOST_BENCH_RESULTS`.
"""

from __future__ import annotations

import datetime
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

RESULTS: Final = Path(
    os.environ.get("AGENT_HOST_BENCH_RESULTS", Path(__file__).resolve().parents[2] / "build" / "bench")
)
"""The folder of the modules' JSON files."""


@dataclass(frozen=True)
class Table:
    """One table of a module's figures: a header row and rows of cells (ratios beside absolute figures)."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    note: str = ""
    """A line printed under the table (what the rows are medians of, ...)."""

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + " --- |" * len(self.header)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines) + (f"\n\n{self.note}" if self.note else "")


@dataclass
class Run:
    """One module's run: started by `Run(module)` before measuring, finished by `record`."""

    module: str
    started: float = field(default_factory=time.time)
    load_before: tuple[float, float, float] = field(default_factory=os.getloadavg)


def record(run: Run, tables: Sequence[Table], figures: Mapping[str, Any]) -> Path:
    """Print the tables and write the module's JSON file; returns its path."""
    print("\n\n".join(table.markdown() for table in tables))
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{run.module}.json"
    document = {
        "module": run.module,
        "date": datetime.datetime.fromtimestamp(run.started, datetime.UTC).isoformat(timespec="seconds"),
        "seconds": round(time.time() - run.started, 1),
        "load_before": list(run.load_before),
        "load_after": list(os.getloadavg()),
        "tables": [asdict(table) for table in tables],
        "figures": figures,
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")
    return path
