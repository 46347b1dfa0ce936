"""``gangplane serve --event-loop`` (gangplane's flag): which loop the process runs on."""

from __future__ import annotations

import asyncio

import pytest

from gangplane import eventloop
from gangplane.cli import _parser, main


def test_auto_is_uvloop_when_installed_else_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eventloop, "uvloop_available", lambda: True)
    assert eventloop.resolve("auto") == "uvloop"
    monkeypatch.setattr(eventloop, "uvloop_available", lambda: False)
    assert eventloop.resolve("auto") == "asyncio"
    assert eventloop.resolve("asyncio") == "asyncio"


def test_asking_for_uvloop_without_it_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eventloop, "uvloop_available", lambda: False)
    with pytest.raises(eventloop.EventLoopUnavailable, match="uvloop is not installed"):
        eventloop.resolve("uvloop")


def test_serve_exits_2_when_uvloop_is_asked_for_but_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(eventloop, "uvloop_available", lambda: False)
    assert main(["serve", "--event-loop", "uvloop"]) == 2
    assert "--event-loop uvloop: uvloop is not installed" in capsys.readouterr().err


def test_a_bad_value_exits_2_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["serve", "--event-loop", "trio"])
    assert e.value.code == 2
    assert "argument --event-loop: invalid choice: 'trio'" in capsys.readouterr().err


def test_the_default_is_asyncios_loop() -> None:
    """uvloop holds more memory per idle TLS watch (issue 25's bound): opt-in only."""
    assert _parser().parse_args(["serve"]).event_loop == "asyncio"


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


@pytest.mark.skipif(not eventloop.uvloop_available(), reason="uvloop is not installed")
def test_run_uses_the_chosen_loop_and_leaves_the_policy_alone() -> None:
    import uvloop

    policy = asyncio.get_event_loop_policy()
    assert issubclass(eventloop.run(_loop_type(), "uvloop"), uvloop.Loop)
    assert not issubclass(eventloop.run(_loop_type(), "asyncio"), uvloop.Loop)
    assert asyncio.get_event_loop_policy() is policy
