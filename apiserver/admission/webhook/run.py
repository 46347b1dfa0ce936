"""Running a synchronous write whose admission needs webhook answers, without blocking the event loop.

:func:`run_admitted` calls the write with a :class:`WebhookRun` set in a context variable. The webhook
plugins look up each call they need in the run's answers; a missing one raises
:class:`WebhookCallsNeeded` (before the write stored anything: admission precedes storage). The
driver awaits those calls and calls the write again, now answered further; the pass after the last
answer completes the write. An answer is keyed by the webhook and a digest of exactly what it was
sent, so a pass that would send something else (the object changed meanwhile) calls it again.
Values the write invents (a new object's uid, creation time and generated name) are drawn once per
run (:func:`stable`), so every pass sends the webhooks the same object.

Writes made without a run (the server's own bootstrap and CRD bookkeeping, which are synchronous)
are not sent to webhooks.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from apiserver.meta import new_uid

T = TypeVar("T")

#: answers needed per write are bounded: a chain of mutating webhooks plus one reinvocation each
MAX_PASSES = 64


@dataclass(frozen=True)
class PendingCall:
    """One webhook call admission needs: where, how, and the AdmissionReview to send."""

    key: tuple[Any, ...]
    name: str
    url: str
    #: the TLS server name to verify (``<service>.<namespace>.svc`` for a service reference)
    server_name: str
    ca_bundle: str
    timeout: float
    review: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """A webhook's answer: the AdmissionReview ``response`` or why the call failed."""

    response: dict[str, Any] | None = None
    error: str = ""


class WebhookCallsNeeded(Exception):  # noqa: N818 - a signal to the driver, not an error
    """Admission stopped: these webhooks must be called first (never reaches a client)."""

    def __init__(self, calls: list[PendingCall]) -> None:
        super().__init__(f"{len(calls)} webhook call(s) needed")
        self.calls = calls


@dataclass
class WebhookRun:
    """The answers gathered for one write, and the values it draws once."""

    uid: str = field(default_factory=new_uid)
    answers: dict[tuple[Any, ...], Outcome] = field(default_factory=dict)
    drawn: dict[str, Any] = field(default_factory=dict)
    #: the pass limit was reached: a call still unanswered counts as failed
    exhausted: bool = False


CURRENT_RUN: contextvars.ContextVar[WebhookRun | None] = contextvars.ContextVar("webhook_run", default=None)


def current_run() -> WebhookRun | None:
    return CURRENT_RUN.get()


def stable(key: str, factory: Callable[[], T]) -> T:
    """``factory()`` drawn once per run (every pass of a write sees the same value)."""
    run = CURRENT_RUN.get()
    if run is None:
        return factory()
    if key not in run.drawn:
        run.drawn[key] = factory()
    return run.drawn[key]  # type: ignore[no-any-return]


Caller = Callable[[PendingCall], Awaitable[Outcome]]


async def run_admitted(write: Callable[[], T], call: Caller) -> T:
    """Run ``write`` until admission has every webhook answer it needs; ``call`` makes one call."""
    import asyncio

    run = WebhookRun()
    token = CURRENT_RUN.set(run)
    try:
        for _ in range(MAX_PASSES):
            try:
                return write()
            except WebhookCallsNeeded as need:
                calls = [c for c in need.calls if c.key not in run.answers]
                outcomes = await asyncio.gather(*(call(c) for c in calls))
                for c, o in zip(calls, outcomes, strict=True):
                    run.answers[c.key] = o
        run.exhausted = True  # the last pass: webhooks still unanswered count as failed calls
        return write()
    finally:
        CURRENT_RUN.reset(token)
