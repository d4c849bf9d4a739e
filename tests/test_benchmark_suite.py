"""The benchmark suite's shape (no benchmark is run here): how each kind of figure is judged,
its JSON, and the rows the suite shows for a module that is missing."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from benchmarks import suite
from benchmarks.harness import (
    Figure,
    bound_figure,
    cost_figure,
    delta_figure,
    info_figure,
    percentile,
    speed_figure,
)


def test_each_kind_is_judged_the_way_its_target_reads() -> None:
    assert speed_figure("s", 2e-6, 1e-6, 0.5).passed  # half the baseline's speed
    assert not speed_figure("s", 3e-6, 1e-6, 0.5).passed
    assert (
        cost_figure("c", "ms", 13, 10, 1.3).passed
        and not cost_figure("c", "ms", 14, 10, 1.3).passed
    )
    assert delta_figure("d", "", 2, 0, 2).passed and not delta_figure("d", "", 3, 0, 2).passed
    assert bound_figure("b", "", 100, 100).passed and not bound_figure("b", "", 101, 100).passed
    assert info_figure("i", "ms", 1, 2, 0.5).passed is None


def test_targets_read_as_the_issue_writes_them() -> None:
    texts = [f.target_text for f in (speed_figure("s", 1, 1, 0.5), cost_figure("c", "", 1, 1, 2),
                                     delta_figure("d", "", 1, 1, 2), bound_figure("b", "", 1, 2))]  # fmt: skip
    assert texts == ["≥ 0.50×", "≤ 2.00×", "≤ +2", "≤ bound"]


def test_json_is_strict_and_round_trips() -> None:
    figure = info_figure("floor", "ms", 5.0, 1.0, 0.2, baseline_name="bare")
    row = json.loads(json.dumps(figure.to_json(), allow_nan=False))
    assert row["target"] is None and row["passed"] is None
    back = Figure.from_json(row)
    assert math.isnan(back.target) and back.name == "floor" and back.kind == "info"


def test_a_missing_module_gives_a_visible_row_per_expected_figure() -> None:
    suite.EXPECTED["bench_nowhere"] = ("one row", "another row")
    try:
        rows = suite.run_module("bench_nowhere", quick=True)
    finally:
        del suite.EXPECTED["bench_nowhere"]
    assert [(r.name, r.verdict) for r in rows] == [("one row", "not present"),
                                                   ("another row", "not present")]  # fmt: skip


def test_the_issue_table_comes_first_in_its_order() -> None:
    assert suite.discover()[: len(suite.EXPECTED)] == list(suite.EXPECTED)


def test_a_subclass_that_judges_lower_as_better_is_written_as_a_cost() -> None:
    @dataclass(frozen=True)
    class OldCost(Figure):
        @property
        def passed(self) -> bool:
            return self.ratio <= self.target

    written = suite.normalised(OldCost("rss", "MiB", 60, 50, 1.2, 1.3))
    assert written.kind == "cost" and written.passed


def test_percentile_is_nearest_rank() -> None:
    values = list(range(1, 101))
    assert (percentile(values, 0.5), percentile(values, 0.99), percentile(values, 1.0)) == (
        50,
        99,
        100,
    )
