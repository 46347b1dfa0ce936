"""Controller sync errors are logged once per cause, then with backoff (issue 25, noise).

A key failing again and again for one reason (a ResourceClaimTemplate not created yet) gives one
WARNING, reminders at the 2nd, 4th, 8th… repetition, and a single traceback at most; a new cause or
a success in between makes the next failure news again.
"""

from __future__ import annotations

import logging

import pytest

from controllers.errorlog import SyncErrorLog


def test_one_warning_per_cause_then_reminders_spaced_like_the_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="t")
    el = SyncErrorLog(logging.getLogger("t"), "resource-claim-controller")
    for _ in range(20):
        el.failed(("ns", "pod"), "resource claim template 'tpl': not found")
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines[0] == (
        "WARNING",
        "resource-claim-controller: sync ('ns', 'pod') failed: resource claim template 'tpl': not found",
    )
    assert [lvl for lvl, _ in lines] == ["WARNING", "INFO", "INFO", "INFO", "INFO"]  # 1st; 2, 4, 8, 16
    assert "still failing (16 times)" in lines[-1][1]
    assert el.failing(("ns", "pod")) == 20


def test_a_new_cause_or_a_success_is_news_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="t")
    el = SyncErrorLog(logging.getLogger("t"), "c")
    el.failed("k", "a")
    el.failed("k", "b")
    el.forget("k")
    el.failed("k", "b")
    assert [r.levelname for r in caplog.records] == ["WARNING", "WARNING", "WARNING"]


def test_an_unexpected_exception_carries_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="t")
    el = SyncErrorLog(logging.getLogger("t"), "c")
    for _ in range(5):
        try:
            raise KeyError("status")
        except KeyError:
            el.failed("k", "KeyError: 'status'", traceback=True, level=logging.ERROR)
    with_trace = [r for r in caplog.records if r.exc_info]
    assert len(with_trace) == 1 and with_trace[0].levelname == "ERROR"
