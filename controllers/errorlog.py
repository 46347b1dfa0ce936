"""Sync errors logged once per cause, then with backoff, as client-go's workqueue users see them.

A controller whose ``sync`` keeps failing for the same reason (a ResourceClaimTemplate that does
not exist yet) is retried with exponential backoff; logging every retry with a full traceback
buried real problems (618 lines in one run). client-go controllers report through
``utilruntime.HandleError``, which rate-limits, and requeue quietly. Here:

* the first failure of a key for a cause is logged at WARNING (an unexpected exception with its
  traceback, once);
* the same cause failing again for that key is logged at DEBUG, except on the 2nd, 4th, 8th, …
  repetition: one INFO line saying it still fails and how often;
* a different cause is a first failure again; a successful sync (:meth:`SyncErrorLog.forget`)
  clears the key's history, as ``queue.Forget`` clears its backoff.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

#: keys whose failures are remembered at most (older ones are dropped first)
MAX_KEYS = 10_000


@dataclass
class _Failing:
    cause: str
    count: int


class SyncErrorLog:
    """Per-key memory of the last failure's cause, deciding how loudly to log the next one."""

    def __init__(self, logger: logging.Logger, name: str) -> None:
        self.log = logger
        self.name = name
        self._failing: dict[Any, _Failing] = {}

    def failed(self, key: Any, cause: str, *, traceback: bool = False, level: int = logging.WARNING) -> None:
        """Report that syncing ``key`` failed because of ``cause`` (a one-line message)."""
        seen = self._failing.get(key)
        if seen is None or seen.cause != cause:
            if len(self._failing) >= MAX_KEYS:
                self._failing.pop(next(iter(self._failing)))
            self._failing[key] = _Failing(cause, 1)
            self.log.log(level, "%s: sync %s failed: %s", self.name, key, cause, exc_info=traceback)
            return
        seen.count += 1
        if seen.count & (seen.count - 1) == 0:  # 2, 4, 8, …: a reminder, spaced like the backoff
            self.log.info("%s: sync %s still failing (%d times): %s", self.name, key, seen.count, cause)
        else:
            self.log.debug("%s: sync %s failed again: %s", self.name, key, cause)

    def forget(self, key: Any) -> None:
        """The key synced: its next failure is news again."""
        self._failing.pop(key, None)

    def failing(self, key: Any) -> int:
        """How many times in a row ``key`` failed for its current cause (0 when it is fine)."""
        seen = self._failing.get(key)
        return seen.count if seen is not None else 0
