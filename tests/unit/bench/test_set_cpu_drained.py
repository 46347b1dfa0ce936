"""``bench/micro/set_cpu_drained.py``: the phase's CPU and Events, and the backlog after it.

Each gang set of three records eight Events (SuccessfulCreate and Scheduled per pod,
WorkloadCreated, PodGroupCreated); the recorders write one per loop pass, so some are still
queued when the last pod is bound. The script must count every one of them in ``events_total``
(written by the time it stops the clock) and only those of the phase in ``events_phase``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.micro.set_cpu_drained import measure

pytestmark = pytest.mark.anyio


async def test_the_drained_figures_hold_every_event_of_the_sets() -> None:
    got = await measure(sets=6, nodes=40)
    assert got["events_total"] == 8
    assert 0 <= got["events_phase"] <= got["events_total"]
    assert 0 < got["phase"] <= got["drained"]
    assert got["placed_median_s"] >= 0


def test_pairs_print_the_ratio_of_the_medians_and_the_median_of_the_rounds_ratios(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--pairs``: the machine drifts between rounds, so B reads 0.9x of A in two rounds of
    three while the ratio of the medians sets B's 5.0 against A's 4.0; both are printed."""
    import bench.micro.alternating as alternating
    from bench.micro.set_cpu_drained import _pairs

    def runs(
        commands: dict[str, tuple[list[str], dict[str, str]]], rounds: int
    ) -> dict[str, list[dict[str, float]]]:
        a, b = commands
        assert rounds == 3 and commands[a][1]["PYTHONPATH"].endswith("/A") and "--sets" in commands[b][0]
        return {
            a: [
                {"phase": 1.0, "drained": 2.0},
                {"phase": 4.0, "drained": 2.0},
                {"phase": 10.0, "drained": 2.0},
            ],
            b: [
                {"phase": 0.9, "drained": 1.0},
                {"phase": 5.0, "drained": 1.0},
                {"phase": 9.0, "drained": 1.0},
            ],
        }

    monkeypatch.setattr(alternating, "rotated_json_runs", runs)
    _pairs("script.py", ["/x/A", "/x/B"], 3, ["--sets", "600"])
    out = capsys.readouterr().out
    assert "phase: A 4.000 B 5.000 ms/set  B/A 1.250  by rounds 0.900  pairwise [0.9, 1.25, 0.9]" in out
    assert "drained: A 2.000 B 1.000 ms/set  B/A 0.500  by rounds 0.500" in out


async def test_spy_attaches_py_spy_to_this_process_and_interrupts_it_before_the_figures_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--spy``: py-spy is attached to this process (``--pid``) with the rate and raw output
    asked, and interrupted (it writes its file on SIGINT) by the time the figures are returned.
    A stand-in ``py-spy`` on PATH writes the arguments it got when interrupted."""
    import json
    import os
    import sys

    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "py-spy"
    fake.write_text(
        f"#!{sys.executable} -S\n"
        "import json, signal, sys\n"
        "args = sys.argv[1:]\n"
        "def stop(*_):\n"
        "    with open(args[args.index('--output') + 1], 'w') as f:\n"
        "        json.dump(args, f)\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGINT, stop)\n"
        "while True:\n"
        "    signal.pause()\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    out = tmp_path / "phase.txt"
    got = await measure(sets=6, nodes=40, spy=str(out), spy_rate=123)
    assert got["events_total"] == 8
    args = json.loads(out.read_text())
    assert args[0] == "record"
    assert args[args.index("--pid") + 1] == str(os.getpid())
    assert args[args.index("--rate") + 1] == "123"
    assert args[args.index("--format") + 1] == "raw"
    assert "--native" not in args
    # --spy-native: the C frames too
    await measure(sets=6, nodes=40, spy=str(out), spy_rate=123, spy_native=True)
    assert "--native" in json.loads(out.read_text())


def test_spy_is_refused_with_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile is of one run; ``--pairs`` runs many, in other processes."""
    import sys

    from bench.micro import set_cpu_drained

    monkeypatch.setattr(sys, "argv", ["set_cpu_drained.py", "--pairs", "A", "B", "--spy", "f.txt"])
    with pytest.raises(SystemExit) as e:
        set_cpu_drained.main()
    assert e.value.code == 2


def test_spy_native_is_refused_without_spy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--spy-native`` says how to sample; without ``--spy FILE`` there is nothing to sample into."""
    import sys

    from bench.micro import set_cpu_drained

    monkeypatch.setattr(sys, "argv", ["set_cpu_drained.py", "--spy-native"])
    with pytest.raises(SystemExit) as e:
        set_cpu_drained.main()
    assert e.value.code == 2
