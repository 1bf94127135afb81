"""`make bench` writes docs/performance.md from the template and what each module recorded.

Benchmark figures live on that generated page (with the date and machine), not in prose. The renderer
is fed recorded tables as the modules write them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench import page, record


def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    table = record.Table(["serving", "calls/s", "ratio"], [["SDK", "562", "1.00x"], ["proxied", "133", "0.24x"]])
    tables = [table, record.Table(["a", "b"], [["1", "2"]]), record.Table(["c"], [["3"]])]
    record.record(record.Run("serve"), tables, {"sdk": 562.0})
    return {path.stem: json.loads(path.read_text()) for path in tmp_path.glob("*.json")}


def test_a_module_records_its_tables_figures_date_and_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = recorded(tmp_path, monkeypatch)
    assert "| proxied | 133 | 0.24x |" in capsys.readouterr().out
    serve = results["serve"]
    assert serve["figures"] == {"sdk": 562.0} and len(serve["tables"]) == 3
    assert serve["date"].endswith("+00:00") and len(serve["load_before"]) == 3


def test_the_page_holds_the_machine_the_tables_and_says_what_was_not_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = recorded(tmp_path, monkeypatch)
    text = page.render(page.TEMPLATE.read_text(), results, page.machine(), "2026-12-02T00:00:00+00:00")
    assert text.startswith(page.GENERATED) and "Page written 2026-12-02T00:00:00+00:00." in text
    for what in ("| CPU |", "| cores |", "| OS |", "| Python |", "| packages | agent-host "):
        assert what in text, what
    assert "| proxied | 133 | 0.24x |" in text and "| a | b |" in text
    assert text.count("*Measured ") == 1  # once per module, above its first table
    assert "*Not measured in this run: `python -m tests.bench.ray` records it" in text
    assert "<!-- bench:" not in text


def test_every_marker_of_the_template_names_a_known_module() -> None:
    markers = page.MARKER.findall(page.TEMPLATE.read_text())
    assert {module for _, module, _ in markers if module} == set(page.MODULES)


def test_a_marker_for_a_table_a_module_did_not_record_fails() -> None:
    results = {"serve": {"date": "d", "seconds": 1, "load_before": [0, 0, 0], "load_after": [0, 0, 0], "tables": []}}
    with pytest.raises(ValueError, match="recorded 0 tables, not table 0"):
        page.render("<!-- bench: serve 0 -->", results, [], "now")
    with pytest.raises(ValueError, match="unknown bench module 'nope'"):
        page.render("<!-- bench: nope 0 -->", {}, [], "now")
