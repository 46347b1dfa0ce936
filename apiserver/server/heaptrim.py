"""Give the memory of closed connections back to the system.

A server that once held 1,000 watches kept their resident memory for good (issue 25: 500 of 1,000
closed, RSS unchanged), for two reasons. A connection's objects (its tasks, coroutines, protocol
and SSL objects) sit in reference cycles, and ``gangplane serve`` runs the cyclic collector's full
pass rarely (``tune_gc``): the garbage lived on until the next one. And glibc keeps freed heap
pages mapped. :class:`HeapTrimmer` watches the number of open connections and, once it has fallen
by a quarter of its high-water mark (and by at least ``threshold``), runs a full collection and
asks the C allocator to return its free pages (``malloc_trim(0)``, which only releases memory
nobody uses). Connection churn of a few clients (kubectl runs) never reaches that, so the pause of
a full collection is paid only when many connections went away at once. Where the C library has
no ``malloc_trim`` (musl, macOS) only the collection runs.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
from collections.abc import Callable

log = logging.getLogger("gangplane.apiserver")


def _malloc_trim() -> Callable[[], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: int(trim(0))


class HeapTrimmer:
    """Trims the heap when ``open_connections()`` has fallen by ``threshold`` since the last look."""

    def __init__(
        self, open_connections: Callable[[], int], *, every: float = 2.0, threshold: int = 16
    ) -> None:
        self.open_connections = open_connections
        self.every = every
        self.threshold = threshold
        self.trims = 0
        self._trim = _malloc_trim()
        self._high = 0

    def check(self) -> bool:
        """One look: collect and trim if enough connections closed since the high-water mark;
        returns whether it did."""
        n = self.open_connections()
        if self._high - n < max(self.threshold, self._high // 4):
            self._high = max(self._high, n)
            return False
        self._high = n
        gc.collect()
        if self._trim is not None:
            self._trim()
        self.trims += 1
        return True

    async def run(self) -> None:
        """Look every ``every`` seconds until cancelled."""
        while True:
            await asyncio.sleep(self.every)
            try:
                self.check()
            except Exception:  # never let housekeeping take the server down
                log.exception("heap trim failed")
