"""The event loop a long-lived object runs on, kept instead of asked for on every call (gangplane).

CPython 3.11's ``asyncio.get_running_loop()`` compares the running loop's recorded process id
with ``getpid()`` on every call (to notice a fork), and glibc makes that a system call each time:
0.5 µs here. Asked per request and per event (a controller's clock, a work queue's timers, a
watch's waits, the scheduler's binding tasks) it was 1.4 % of gangs-1000x3's measured phase
(session 30, py-spy ``--native``). An object that lives on one loop keeps it; :func:`running`
gives the kept loop while it runs, and asks again otherwise (never started, or stopped: a plane
restarted on a new loop, a test's second ``asyncio.run``), so nothing is bound to a dead loop.

The kept loop is given whenever it runs, from whatever thread asks: an object that keeps one is
used on that loop's thread only. Every one of gangplane's is (a controller, its work queue, a
watcher, the scheduler, a client's loop share); the testing plane, which runs the plane on a
thread of its own, hands its calls to the plane's loop (``run_coroutine_threadsafe``).
"""

from __future__ import annotations

import asyncio

__all__ = ["running"]


def running(kept: asyncio.AbstractEventLoop | None) -> asyncio.AbstractEventLoop:
    """``kept`` while it runs, else the running loop (``RuntimeError`` outside one, as asking raises)."""
    if kept is not None and kept.is_running():
        return kept
    return asyncio.get_running_loop()
