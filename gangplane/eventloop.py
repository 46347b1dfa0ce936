"""The event loop ``gangplane serve`` runs on (``--event-loop``; gangplane's own flag).

One process runs the API server and, by default, every component: each API call of a controller
yields to the loop once, each watch event wakes a task, each HTTP answer is a transport write
(TLS over HTTPS). The loop's own bookkeeping (``call_soon`` handles, ``select`` per turn,
futures, the pure-Python SSL protocol) was about 8 % of the server's CPU while 1,000 node-agent
pods went Running (py-spy, session 11b). uvloop (the ``uvloop`` extra), the libuv-based drop-in
loop uvicorn itself prefers, does that work in C.

The default stays asyncio's loop: under uvloop an idle TLS watch holds more memory (its SSL
protocol keeps a read buffer per connection, where gangplane points asyncio's at one shared
buffer: 67 KB per idle TLS watch against 45 KB, over issue 25's 50 KB bound), for a few per cent
less CPU (docs/bench.md, "Session 11b — httprun"). Nothing a client sees depends on the choice.
``auto`` is uvloop when installed, else asyncio.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

AUTO, UVLOOP, ASYNCIO = "auto", "uvloop", "asyncio"
CHOICES = (AUTO, UVLOOP, ASYNCIO)


class EventLoopUnavailable(ValueError):
    """``--event-loop uvloop`` where uvloop is not installed."""


def uvloop_available() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def resolve(choice: str) -> str:
    """The loop ``choice`` names: ``auto`` is uvloop when installed, else asyncio."""
    if choice not in CHOICES:
        raise EventLoopUnavailable(f"invalid --event-loop {choice!r}: one of {', '.join(CHOICES)}")
    if choice == AUTO:
        return UVLOOP if uvloop_available() else ASYNCIO
    if choice == UVLOOP and not uvloop_available():
        raise EventLoopUnavailable(
            "--event-loop uvloop: uvloop is not installed (pip install 'gangplane[uvloop]')"
        )
    return choice


def loop_factory(loop: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of a resolved loop name, for :class:`asyncio.Runner` (None: asyncio's own)."""
    if loop == UVLOOP:
        import uvloop

        factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
        return factory
    return None


def run(main: Coroutine[Any, Any, T], loop: str) -> T:
    """``asyncio.run(main)`` on the resolved ``loop``, without touching the process's loop policy
    (so a caller in the same process, a test, keeps its own loop)."""
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        return runner.run(main)


__all__ = ["ASYNCIO", "AUTO", "CHOICES", "UVLOOP", "EventLoopUnavailable", "loop_factory", "resolve", "run"]
