"""Controller expectations (kube's ``ControllerExpectations`` / ``UIDTrackingControllerExpectations``).

A ReplicaSet that just created 3 pods must not create 3 more on its next sync merely because its
informer has not delivered them yet. Before writing, a controller records how many creations and
which deletions it expects for a key; the pod handlers lower the counts as the informer observes
them. ``satisfied`` is true once every expectation was observed, or when they are older than
``ttl`` (kube's ``ExpectationsTimeout``, 5 minutes) so a lost watch event cannot wedge a key.
Pod creations that fail are "observed" immediately by the caller (``creation_observed``), as kube
does, since no informer event will ever arrive for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apiserver.meta import Clock

EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class _Expectation:
    """One key's outstanding creations and deletions, and when they were recorded (for the timeout)."""

    add: int = 0
    delete: int = 0
    timestamp: float = 0.0
    deleting: set[str] = field(default_factory=set)

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class Expectations:
    """Per-key counts of pending creations and (tracked by pod key) deletions."""

    def __init__(self, clock: Clock | None = None, ttl: float = EXPECTATIONS_TIMEOUT) -> None:
        self.clock = clock or Clock()
        self.ttl = ttl
        self._by_key: dict[str, _Expectation] = {}

    def satisfied(self, key: str) -> bool:
        """``SatisfiedExpectations``: no record, all observed, or expired."""
        exp = self._by_key.get(key)
        if exp is None:
            return True
        if exp.fulfilled():
            return True
        return self.clock.monotonic() - exp.timestamp > self.ttl

    def expect_creations(self, key: str, adds: int) -> None:
        self._by_key[key] = _Expectation(add=adds, timestamp=self.clock.monotonic())

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        """``ExpectDeletions`` with UID tracking: each deletion is observed at most once."""
        self._by_key[key] = _Expectation(
            delete=len(pod_keys), timestamp=self.clock.monotonic(), deleting=set(pod_keys)
        )

    def set_expectations(self, key: str, adds: int, pod_keys: list[str]) -> None:
        """``SetExpectations``: creations and tracked deletions at once (the DaemonSet controller)."""
        self._by_key[key] = _Expectation(
            add=adds, delete=len(pod_keys), timestamp=self.clock.monotonic(), deleting=set(pod_keys)
        )

    def creation_observed(self, key: str) -> None:
        exp = self._by_key.get(key)
        if exp is not None:
            exp.add -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        exp = self._by_key.get(key)
        if exp is not None and pod_key in exp.deleting:
            exp.deleting.discard(pod_key)
            exp.delete -= 1

    def delete(self, key: str) -> None:
        """``DeleteExpectations``: the controller object is gone."""
        self._by_key.pop(key, None)

    def pending(self, key: str) -> tuple[int, int]:
        exp = self._by_key.get(key)
        return (exp.add, exp.delete) if exp is not None else (0, 0)
