"""``bench.micro.pairs_pool``: --pairs runs pooled and read at the reference speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.micro.pairs_pool import files_of, main, rounds_of, summary


def _doc(runs: list[dict[str, float]], scenario: str = "gangs-1000x3") -> dict[str, object]:
    return {"scenarios": [{"name": "other", "runs": [{"pods_per_s": 1.0}]}, {"name": scenario, "runs": runs}]}


def _write_run(folder: Path, a: list[float], b: list[tuple[float, float]]) -> None:
    folder.mkdir(parents=True)
    (folder / "pairs-A.json").write_text(json.dumps(_doc([{"pods_per_s": x} for x in a])))
    (folder / "pairs-B.json").write_text(
        json.dumps(_doc([{"pods_per_s": p, "cpu_ms_per_pod": c} for p, c in b]))
    )


def test_rounds_pair_by_position_across_folders_and_renamed_files(tmp_path: Path) -> None:
    _write_run(tmp_path / "one", [200.0, 250.0], [(800.0, 1.2), (1000.0, 1.0)])
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "results-x-A.json").write_text(json.dumps(_doc([{"pods_per_s": 300.0}])))
    (kept / "results-x-B.json").write_text(json.dumps(_doc([{"pods_per_s": 1300.0, "cpu_ms_per_pod": 0.8}])))
    (tmp_path / "empty").mkdir()  # a folder without results: skipped
    # a run with a repetition missing on one side: its positions are not rounds, left out
    _write_run(tmp_path / "uneven", [200.0, 210.0], [(900.0, 1.1)])
    runs = [tmp_path / "one", kept / "results-x-A.json", tmp_path / "empty", tmp_path / "uneven"]
    assert files_of(tmp_path / "empty") is None
    assert rounds_of(runs, "gangs-1000x3") == [
        (200.0, 800.0, 1.2),
        (250.0, 1000.0, 1.0),
        (300.0, 1300.0, 0.8),
    ]
    assert rounds_of(runs, "no-such-scenario") == []


def test_summary_of_a_build_exactly_four_times_the_reference() -> None:
    # B = 4 A, and CPU per pod = 1000 / B: the fit and the band must give B at the reference exactly
    rounds = [(a, 4 * a, 1000.0 / (4 * a)) for a in (180.0, 200.0, 230.0, 240.0, 250.0, 260.0, 300.0, 320.0)]
    s = summary(rounds, reference=245.0, target=1000.0, cpu_target=1.0)
    assert s["rounds"] == 8
    assert s["factor_median"] == pytest.approx(4.0)
    assert s["factor_wanted"] == pytest.approx(1000 / 245)
    assert s["rounds_reaching_factor"] == 0  # 4.0 < 4.08
    assert s["rounds_meeting_both"] == 4  # B >= 1000 from A = 250 on
    assert s["fit"]["b_at_reference"] == pytest.approx(980.0)
    assert s["fit"]["cpu_at_reference"] == pytest.approx(1000.0 / 980.0)
    assert s["band"]["rounds"] == 4  # 230, 240, 250, 260 are within 10 % of 245
    assert s["normalised_median"] == pytest.approx(980.0)
    assert [b["rounds"] for b in s["bins"]] == [2, 2, 2, 2]
    assert all(b["factor"] == pytest.approx(4.0) for b in s["bins"])


def test_main_prints_the_reading_or_says_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_run(tmp_path / "r", [240.0, 250.0], [(1000.0, 1.0), (1040.0, 0.96)])
    assert main([str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "2 rounds" in out and "least squares at A = 245" in out
    assert main([str(tmp_path / "r"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == 2
    assert main([str(tmp_path / "missing")]) == 1
    assert "no rounds of gangs-1000x3" in capsys.readouterr().out


def test_factor_quartiles_interpolate_between_rounds_as_numpy_does() -> None:
    # factors 1..5 and 1..4: numpy.quantile's default (linear) gives 2/4 and 1.75/3.25
    five = [(100.0, 100.0 * f, 1.0) for f in (3, 1, 5, 2, 4)]
    s = summary(five, reference=245.0, target=1000.0, cpu_target=1.0)
    assert (s["factor_q1"], s["factor_median"], s["factor_q3"]) == pytest.approx((2.0, 3.0, 4.0))
    four = [(100.0 + f, (100.0 + f) * f, 1.0) for f in (1, 2, 3, 4)]
    s = summary(four, reference=245.0, target=1000.0, cpu_target=1.0)
    assert (s["factor_q1"], s["factor_q3"]) == pytest.approx((1.75, 3.25))
    one = summary([(245.0, 1000.0, 1.0)], reference=245.0, target=1000.0, cpu_target=1.0)
    assert one["factor_q1"] == one["factor_q3"] == pytest.approx(1000 / 245)
    assert "fit" not in one  # one speed of A: no line
