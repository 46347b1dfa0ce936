"""Which topology domains cannot hold a PodGroup, decided by arithmetic before any pod cycle.

The PodGroup algorithm tries a placement (one rack, one zone, ...) by running a full pod cycle
per pod in it. A placement that cannot take the pods the group needs is tried in vain, so
:class:`GroupDemand` rejects it first from the domain's capacity index (free amounts per node,
kept sorted per resource), with conditions every feasible placement satisfies:

* **single node**: among any ``needed`` pods, the largest request of a resource is at least the
  ``needed``-th smallest request of it, and that pod lands on one node;
* **node slots**: each pod takes at least the group's smallest request of every resource and a
  pod slot, so a node holds at most ``min(free_r // smallest_r, free pod slots)`` of them; the
  domain's nodes together must hold ``needed``;
* **totals**: the ``needed`` smallest requests of each resource must fit in the free amounts
  summed over the nodes that can hold at least one pod (negative free amounts, on nodes bound
  past their capacity, count as nothing).

All three only use what NodeResourcesFit's Filter checks, so none applies when the profile has
no NodeResourcesFit Filter, and extended resources the plugin ignores are left out. Nominated
pods and other Filters only take room away, so a rejected domain is one the pod-by-pod search
would find infeasible too: the placement chosen is the same with or without this check.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from scheduler.cache import Domain
from scheduler.framework import Framework
from scheduler.nodeinfo import PODS, PodInfo
from scheduler.plugins.node_resources_fit import NAME as FIT
from scheduler.plugins.node_resources_fit import is_extended_resource


@dataclass(frozen=True)
class GroupDemand:
    """What ``needed`` of a group's pods ask of a domain (see the module docstring)."""

    needed: int
    #: resource -> every pod's request of it, ascending (0 for a pod not asking for it)
    sorted_requests: dict[str, list[int]]
    #: resource -> sums of its ``k`` smallest requests, ``k`` = 0..len(pods)
    prefix_sums: dict[str, list[int]]

    @classmethod
    def of(cls, fw: Framework, pods: Sequence[PodInfo], needed: int) -> GroupDemand | None:
        """The demand of ``needed`` pods out of ``pods``; None when capacity decides nothing here."""
        fit = next((pl for pl in fw.filter_plugins if pl.name == FIT), None)
        needed = min(needed, len(pods))
        if fit is None or needed <= 0:
            return None
        ignored: frozenset[str] = getattr(fit, "ignored", frozenset())
        ignored_groups: frozenset[str] = getattr(fit, "ignored_groups", frozenset())
        names: set[str] = set()
        for pi in pods:
            for r, v in pi.requests.items():
                if v <= 0 or r == PODS:
                    continue
                if is_extended_resource(r) and (r in ignored or r.split("/", 1)[0] in ignored_groups):
                    continue
                names.add(r)
        sorted_requests = {r: sorted(pi.requests.get(r, 0) for pi in pods) for r in sorted(names)}
        prefix_sums = {r: [0, *accumulate(reqs)] for r, reqs in sorted_requests.items()}
        return cls(needed, sorted_requests, prefix_sums)

    def admits(self, domain: Domain) -> bool:
        """False when ``domain`` surely cannot hold ``needed`` of the pods (no Filter needs to run)."""
        return self.most_pods(domain, self.needed) >= self.needed

    def most_pods(self, domain: Domain, cap: int) -> int:
        """An upper bound on how many of the pods ``domain`` can hold, or ``cap`` once that many may fit.

        Each of the three rules bounds the count on its own; the least bound holds.
        """
        bound = cap
        # one node: no more pods than those whose request fits the node with the most free
        for r, reqs in self.sorted_requests.items():
            bound = min(bound, bisect_right(reqs, domain.max_free(r)))
        if domain.max_free(PODS) < 1:
            return 0
        if bound <= 0:
            return bound
        smallest = [(r, reqs[0]) for r, reqs in self.sorted_requests.items() if reqs[0] > 0]
        # walk the nodes from the most free of one resource every pod asks for (pod slots if
        # none): once it drops below that request, no further node can hold a pod at all
        lead, lead_min = smallest[0] if smallest else (PODS, 1)
        index = domain.index
        lst = index._by_resource.get(lead)
        if lst is None:
            return 0
        free_of = index._free
        prefix = self.prefix_sums
        slots = 0
        sums = dict.fromkeys(self.sorted_requests, 0)
        for v, name in lst.islice(0, len(lst), reverse=True):
            if v < lead_min:
                break
            free = free_of[name]
            n = free.get(PODS, 0)
            for r, m in smallest:
                n = min(n, free.get(r, 0) // m)
                if n <= 0:
                    break
            if n <= 0:
                continue
            slots += n
            for r in sums:
                sums[r] += max(0, free.get(r, 0))
            if slots >= bound and all(sums[r] >= prefix[r][bound] for r in sums):
                return bound
        bound = min(bound, slots)
        # totals: the k smallest requests of every resource fit in what the usable nodes have free
        for r, total in sums.items():
            bound = min(bound, bisect_right(prefix[r], total) - 1)
        return bound
