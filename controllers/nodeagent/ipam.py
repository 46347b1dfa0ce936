"""Deterministic addresses for simulated nodes and pods.

Real clusters split a cluster CIDR into per-node pod CIDRs (``node-ipam-controller``) and a CNI
plugin hands out pod IPs from the node's range (``host-local`` IPAM: round robin from the last
reserved address, so a freed IP is not reused at once). The agent does both, deterministically
so that tests and demos see the same addresses every run:

* node ``InternalIP``: ``172.16.0.0/12`` + the node's ordinal + 2 (``.0``/``.1`` skipped);
* node pod CIDR: the next free aligned block of ``10.128.0.0/9``, a ``/24`` unless the node's
  ``pods`` capacity needs a larger block (KWOK-style nodes advertise thousands of pods);
* pod IPs: round robin inside the node's pod CIDR, skipping the network, gateway (``.1``) and
  broadcast addresses.
"""

from __future__ import annotations

import bisect
import ipaddress

CLUSTER_CIDR = ipaddress.IPv4Network("10.128.0.0/9")
NODE_NETWORK = ipaddress.IPv4Network("172.16.0.0/12")
DEFAULT_NODE_PREFIX = 24


def node_internal_ip(ordinal: int) -> str:
    """The node's InternalIP for its ordinal (0-based), stable across restarts."""
    addr = int(NODE_NETWORK.network_address) + ordinal + 2
    if addr >= int(NODE_NETWORK.broadcast_address):
        raise ValueError(f"node ordinal {ordinal} does not fit {NODE_NETWORK}")
    return str(ipaddress.IPv4Address(addr))


def prefix_for_pods(max_pods: int) -> int:
    """Smallest prefix (at most /24) whose block holds ``max_pods`` plus network, gateway, broadcast."""
    prefix = DEFAULT_NODE_PREFIX
    while prefix > CLUSTER_CIDR.prefixlen and (1 << (32 - prefix)) - 3 < max_pods:
        prefix -= 1
    return prefix


class CIDRAllocator:
    """Hands out aligned blocks of :data:`CLUSTER_CIDR`; remembers blocks in use (also foreign ones)."""

    def __init__(self, cluster: ipaddress.IPv4Network = CLUSTER_CIDR) -> None:
        self.cluster = cluster
        self._starts: list[int] = []  # sorted block starts
        self._ends: dict[int, int] = {}  # start -> end (exclusive)
        self._hint = int(cluster.network_address)  # nothing below is free

    def occupy(self, cidr: str) -> bool:
        """Record an existing pod CIDR (a node registered with one); False if unparseable/overlapping."""
        try:
            net = ipaddress.IPv4Network(cidr, strict=False)
        except ValueError:
            return False
        start, end = int(net.network_address), int(net.broadcast_address) + 1
        if self._overlaps(start, end):
            return start in self._ends and self._ends[start] == end
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._ends[start] = end
        return True

    def release(self, cidr: str) -> None:
        try:
            net = ipaddress.IPv4Network(cidr, strict=False)
        except ValueError:
            return
        start = int(net.network_address)
        if start in self._ends:
            del self._ends[start]
            self._starts.remove(start)
            self._hint = min(self._hint, start)

    def _overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self._starts, start) - 1
        if i >= 0 and self._ends[self._starts[i]] > start:
            return True
        j = bisect.bisect_left(self._starts, start)
        return j < len(self._starts) and self._starts[j] < end

    def allocate(self, prefix: int = DEFAULT_NODE_PREFIX) -> str:
        """The lowest free aligned block of ``/prefix``; raises ``ValueError`` when the range is full."""
        size = 1 << (32 - prefix)
        limit = int(self.cluster.broadcast_address) + 1
        cur = (self._hint // size) * size
        while cur + size <= limit:
            if not self._overlaps(cur, cur + size):
                net = ipaddress.IPv4Network((cur, prefix))
                self.occupy(str(net))
                if cur <= self._hint:
                    self._hint = max(self._hint, cur + size)
                return str(net)
            # jump past the block that collides, re-aligned
            i = bisect.bisect_right(self._starts, cur + size - 1) - 1
            nxt = self._ends[self._starts[i]] if i >= 0 else cur + size
            cur = max(cur + size, ((nxt + size - 1) // size) * size)
        raise ValueError(f"cluster CIDR {self.cluster} has no free /{prefix}")


class PodIPPool:
    """Round-robin pod IPs inside one node's pod CIDR, like CNI ``host-local`` IPAM."""

    def __init__(self, cidr: str) -> None:
        net = ipaddress.IPv4Network(cidr, strict=False)
        self.cidr = str(net)
        self._first = int(net.network_address) + 2  # .1 is the node's gateway
        self._last = int(net.broadcast_address) - 1
        self._next = self._first
        self._used: set[int] = set()

    @property
    def size(self) -> int:
        return max(self._last - self._first + 1, 0)

    def reserve(self, ip: str) -> None:
        """Mark an address already handed out (pods found at start-up)."""
        try:
            v = int(ipaddress.IPv4Address(ip))
        except ValueError:
            return
        if self._first <= v <= self._last:
            self._used.add(v)
            if v >= self._next:
                self._next = v + 1 if v < self._last else self._first

    def allocate(self) -> str | None:
        """The next free address after the last one handed out; None when the range is exhausted."""
        n = self.size
        if len(self._used) >= n:
            return None
        cur = self._next
        for _ in range(n):
            if cur > self._last:
                cur = self._first
            if cur not in self._used:
                self._used.add(cur)
                self._next = cur + 1
                return str(ipaddress.IPv4Address(cur))
            cur += 1
        return None

    def release(self, ip: str) -> None:
        try:
            self._used.discard(int(ipaddress.IPv4Address(ip)))
        except ValueError:
            return
