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
import re

CLUSTER_CIDR = ipaddress.IPv4Network("10.128.0.0/9")
NODE_NETWORK = ipaddress.IPv4Network("172.16.0.0/12")
DEFAULT_NODE_PREFIX = 24

_NODE_FIRST = int(NODE_NETWORK.network_address)
_NODE_BROADCAST = int(NODE_NETWORK.broadcast_address)


def dotted(addr: int) -> str:
    """``str(IPv4Address(addr))`` without building the object (thousands of nodes and pods)."""
    return f"{addr >> 24 & 255}.{addr >> 16 & 255}.{addr >> 8 & 255}.{addr & 255}"


_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_CANONICAL = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}(?:/(3[0-2]|[12]?[0-9]))?")


def parse_ip(ip: str) -> int:
    """``int(IPv4Address(ip))``; ``ValueError`` if invalid (the canonical form is read directly)."""
    m = _CANONICAL.fullmatch(ip)
    if m is None or m.group(5) is not None:
        return int(ipaddress.IPv4Address(ip))
    a, b, c, d = (int(x) for x in m.group(1, 2, 3, 4))
    return a << 24 | b << 16 | c << 8 | d


def parse_cidr(cidr: str) -> tuple[int, int]:
    """``IPv4Network(cidr, strict=False)`` as (first address, prefix length); ``ValueError`` if invalid."""
    m = _CANONICAL.fullmatch(cidr)
    if m is None:
        net = ipaddress.IPv4Network(cidr, strict=False)
        return int(net.network_address), net.prefixlen
    a, b, c, d = (int(x) for x in m.group(1, 2, 3, 4))
    prefix = int(m.group(5)) if m.group(5) is not None else 32
    mask = (0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF
    return (a << 24 | b << 16 | c << 8 | d) & mask, prefix


def node_internal_ip(ordinal: int) -> str:
    """The node's InternalIP for its ordinal (0-based), stable across restarts."""
    addr = _NODE_FIRST + ordinal + 2
    if addr >= _NODE_BROADCAST:
        raise ValueError(f"node ordinal {ordinal} does not fit {NODE_NETWORK}")
    return dotted(addr)


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
        self._limit = int(cluster.broadcast_address) + 1
        #: the blocks this allocator handed out, by their text (occupied again on re-registration)
        self._mine: dict[str, tuple[int, int]] = {}

    def occupy(self, cidr: str) -> bool:
        """Record an existing pod CIDR (a node registered with one); False if unparseable/overlapping."""
        known = self._mine.get(cidr)
        if known is not None:
            start, end = known
        else:
            try:
                first, prefix = parse_cidr(cidr)
            except ValueError:
                return False
            start, end = first, first + (1 << (32 - prefix))
        return self._occupy(start, end)

    def _occupy(self, start: int, end: int) -> bool:
        if self._overlaps(start, end):
            return start in self._ends and self._ends[start] == end
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._ends[start] = end
        return True

    def release(self, cidr: str) -> None:
        known = self._mine.get(cidr)
        if known is not None:
            start = known[0]
        else:
            try:
                start = parse_cidr(cidr)[0]
            except ValueError:
                return
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
        limit = self._limit
        cur = (self._hint // size) * size
        while cur + size <= limit:
            if not self._overlaps(cur, cur + size):
                text = f"{dotted(cur)}/{prefix}"
                self._mine[text] = (cur, cur + size)
                self._occupy(cur, cur + size)
                if cur <= self._hint:
                    self._hint = max(self._hint, cur + size)
                return text
            # jump past the block that collides, re-aligned
            i = bisect.bisect_right(self._starts, cur + size - 1) - 1
            nxt = self._ends[self._starts[i]] if i >= 0 else cur + size
            cur = max(cur + size, ((nxt + size - 1) // size) * size)
        raise ValueError(f"cluster CIDR {self.cluster} has no free /{prefix}")


class PodIPPool:
    """Round-robin pod IPs inside one node's pod CIDR, like CNI ``host-local`` IPAM."""

    def __init__(self, cidr: str) -> None:
        first, prefix = parse_cidr(cidr)
        self.cidr = f"{dotted(first)}/{prefix}"
        self._first = first + 2  # .1 is the node's gateway
        self._last = first + (1 << (32 - prefix)) - 2  # below the broadcast address
        self._next = self._first
        self._used: set[int] = set()

    @property
    def size(self) -> int:
        return max(self._last - self._first + 1, 0)

    def reserve(self, ip: str) -> None:
        """Mark an address already handed out (pods found at start-up)."""
        try:
            v = parse_ip(ip)
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
                return dotted(cur)
            cur += 1
        return None

    def release(self, ip: str) -> None:
        try:
            self._used.discard(parse_ip(ip))
        except ValueError:
            return
