"""``ControllerExpectations`` for the Job controller: pod creations and deletions not yet observed.

The pod cache lags behind the controller's own writes. Without expectations a sync that runs
before the informer has delivered the pods it just created would create them again. Before
creating (deleting) ``n`` pods the controller raises the Job's expected adds (deletes) by ``n``;
each failed call lowers it again, each pod event the informer delivers for the Job lowers it by
one. While anything is outstanding the Job's pods are not managed (status is still tracked). An
expectation older than :data:`EXPECTATIONS_TIMEOUT` is considered satisfied, as in kube, so a lost
event cannot wedge a Job.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.meta import Clock

#: kube's ``ExpectationsTimeout``
EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class _Entry:
    """One Job's outstanding pod creations and deletions, and when they were raised (for the timeout)."""

    adds: int = 0
    dels: int = 0
    at: float = 0.0


class Expectations:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._entries: dict[str, _Entry] = {}

    def _entry(self, key: str) -> _Entry:
        e = self._entries.get(key)
        if e is None:
            e = self._entries[key] = _Entry()
        e.at = self.clock.monotonic()
        return e

    def expect_creations(self, key: str, n: int) -> None:
        if n > 0:
            self._entry(key).adds += n

    def expect_deletions(self, key: str, n: int) -> None:
        if n > 0:
            self._entry(key).dels += n

    def creation_observed(self, key: str) -> None:
        e = self._entries.get(key)
        if e is not None and e.adds > 0:
            e.adds -= 1

    def deletion_observed(self, key: str) -> None:
        e = self._entries.get(key)
        if e is not None and e.dels > 0:
            e.dels -= 1

    def satisfied(self, key: str) -> bool:
        e = self._entries.get(key)
        if e is None or (e.adds <= 0 and e.dels <= 0):
            return True
        return self.clock.monotonic() - e.at > EXPECTATIONS_TIMEOUT

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)
