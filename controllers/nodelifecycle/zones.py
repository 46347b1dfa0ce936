"""Zone disruption states and the per-zone NoExecute rate limit of the node lifecycle controller.

kube taints failed nodes through one rate-limited queue per zone (``--node-eviction-rate`` 0.1
nodes/s, burst 1) so that a network partition does not evict a whole cluster at once. A zone's
state decides its rate:

=====================  =====================================================  ======================
state                  when (``ComputeZoneState``)                            rate
=====================  =====================================================  ======================
``Normal``             otherwise                                              ``eviction_rate``
``PartialDisruption``  > 2 nodes not Ready and ≥ ``unhealthy_threshold``      ``secondary_rate`` if the
                       (0.55) of the zone                                     zone has more than
                                                                              ``large_cluster_size``
                                                                              (50) nodes, else 0
``FullDisruption``     no node Ready                                          ``eviction_rate``
=====================  =====================================================  ======================

When *every* zone is in ``FullDisruption`` the controller assumes it is the one cut off: it stops
tainting and removes the NoExecute taints it added (kube's "master disruption mode"). All of
this is pure and driven by the times the caller passes, so tests step a fake clock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

INITIAL = "Initial"
NORMAL = "Normal"
PARTIAL = "PartialDisruption"
FULL = "FullDisruption"


@dataclass(frozen=True)
class ZoneConfig:
    """kube-controller-manager's flags, rates already divided by the time scale by the caller."""

    eviction_rate: float = 0.1
    secondary_rate: float = 0.01
    large_cluster_size: int = 50
    unhealthy_threshold: float = 0.55


def zone_key(labels: dict[str, str]) -> str:
    """kube's ``GetZoneKey``: ``region:\\x00:zone`` from the topology labels ("" without either)."""
    region = (
        labels.get("topology.kubernetes.io/region")
        or labels.get("failure-domain.beta.kubernetes.io/region")
        or ""
    )
    zone = (
        labels.get("topology.kubernetes.io/zone")
        or labels.get("failure-domain.beta.kubernetes.io/zone")
        or ""
    )
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def zone_state(ready: Iterable[str], threshold: float) -> tuple[int, str]:
    """``ComputeZoneState``: (nodes not Ready, state) from the Ready statuses of a zone's nodes."""
    n_ready = n_not = 0
    for status in ready:
        if status == "True":
            n_ready += 1
        else:
            n_not += 1
    if n_ready == 0 and n_not > 0:
        return n_not, FULL
    if n_not > 2 and n_not / (n_not + n_ready) >= threshold:
        return n_not, PARTIAL
    return n_not, NORMAL


def zone_rate(state: str, size: int, cfg: ZoneConfig) -> float:
    """``setLimiterInZone``: the tainting rate of a zone in ``state`` with ``size`` nodes."""
    if state == PARTIAL:
        return cfg.secondary_rate if size > cfg.large_cluster_size else 0.0
    return cfg.eviction_rate


@dataclass
class RateLimitedQueue:
    """kube's ``RateLimitedTimedQueue`` with a token bucket of burst 1: nodes wait in arrival
    order; one is let through whenever a token is available (a rate of 0 lets none through)."""

    rate: float
    _tokens: float = 1.0
    _last: float | None = None
    _items: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def add(self, name: str) -> None:
        self._items.setdefault(name, None)

    def remove(self, name: str) -> None:
        self._items.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    def swap_rate(self, rate: float, now: float) -> None:
        """A new limiter (kube's ``SwapLimiter``): a full bucket at the new rate."""
        if rate != self.rate:
            self.rate = rate
            self._tokens = 1.0
            self._last = now

    def _refill(self, now: float) -> None:
        if self._last is not None and self.rate > 0:
            self._tokens = min(1.0, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def take(self, now: float) -> str | None:
        """The next node allowed through at ``now``, or None (empty, or no token yet)."""
        self._refill(now)
        if not self._items or self.rate <= 0 or self._tokens < 1.0:
            return None
        self._tokens -= 1.0
        name = next(iter(self._items))
        del self._items[name]
        return name

    def next_token_at(self, now: float) -> float | None:
        """When the next node could go through (None: empty or stopped)."""
        if not self._items or self.rate <= 0:
            return None
        self._refill(now)
        return now + max(0.0, (1.0 - self._tokens) / self.rate)


__all__ = [
    "FULL",
    "INITIAL",
    "NORMAL",
    "PARTIAL",
    "RateLimitedQueue",
    "ZoneConfig",
    "zone_key",
    "zone_rate",
    "zone_state",
]
