"""``gangplane`` turns Python's cyclic garbage collector off while a server starts and back on
once it serves (``tune_gc``); a command that returns instead (an error, ``--help``) must hand
the caller's collector back as it found it, or a process embedding ``main`` would silently run
without one."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gangplane.cli import main


@pytest.fixture
def collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_a_refused_serve_leaves_the_collector_on(collector: None, capsys: pytest.CaptureFixture[str]) -> None:
    gc.enable()
    assert main(["serve", "--feature-gates=NoSuchGate=true"]) == 2
    assert "invalid --feature-gates" in capsys.readouterr().err
    assert gc.isenabled()


def test_help_leaves_the_collector_on(collector: None, capsys: pytest.CaptureFixture[str]) -> None:
    gc.enable()
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--feature-gates" in capsys.readouterr().out
    assert gc.isenabled()


def test_a_caller_without_a_collector_keeps_it_off(collector: None) -> None:
    gc.disable()
    assert main(["serve", "--leader-elect-lease-duration=0s"]) == 2
    assert not gc.isenabled()
