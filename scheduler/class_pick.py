"""A run's pick over classes of alike nodes instead of over its nodes one by one (gangplane).

A big gang's search (:class:`~scheduler.placement_run.WindowedRuns`: ten windows of 500 nodes
over 5,000) picks each pod's node from its window's run in numpy: PodTopologySpread's column
gathered from the per-domain terms and scored (``int(term_0 + term_1 + 0.5)`` per node),
NormalizeScore over the column, the weighted totals, the best and the ties, ~14 array passes
per pod. Between two turns of a window the other nine windows' pods add to the zone counts, so
the column's min and max (NormalizeScore's bounds) move every turn and everything is redone.

Yet a window's 500 nodes differ in only a few things that decide their total: per spreading
constraint the node's domain (its row of per-value terms) or its hostname term, and the
weighted sum of the node-local Scores (the run's ``base``). Nodes equal in all of them are a
*class* (about 20 in a window) and have one raw score, one normalized score and one total. So
:class:`ClassPick` keeps each feasible node's class (a numpy id per position) and per class its
parts and size, and per pod:

- the raw score of each non-empty class from the current per-value terms (the same floats, added
  in constraint order, rounded as ``int(t + 0.5)``: :meth:`SpreadScoreRun._score_all
  <scheduler.plugins.spread_run.SpreadScoreRun._score_all>`'s sums);
- NormalizeScore's bounds as the min and max over the non-empty classes (the nodes' own), and
  ``MAX * (hi + lo - raw) // hi`` per class (``MAX`` for all when ``hi`` is 0), as
  ``_normalize_array_bounded``; a result out of range hands the pick to the columns (which end
  the run as before);
- the totals ``base + weight * norm``, the best, and the number of tied nodes (the best classes'
  sizes); ``rng.randrange(ties)`` drawn only when there are several, as
  :func:`scheduler.score_totals.select` draws; the ``r``-th tied node in the run's feasible order
  (rotation order), found by one pass over the class ids (one byte each: a ``bytes.translate``
  masks the tied classes).

Only a node taking one of the run's pods changes class (its hostname term and base:
:meth:`moved`); the other windows' pods change the per-value terms, which every class reads.

Preconditions (:meth:`ClassPick.of`), else the run picks from its columns (the general path,
which stays the reference of ``tests/unit/scheduler/test_class_pick.py``): the run in arrays
with exactly one carried column, gangplane's PodTopologySpread in arrays (no ignored node), with
its batch NormalizeScore; every other column node-local (in ``base``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE

if TYPE_CHECKING:
    import random

    from scheduler.placement_run import PlacementRun

__all__ = ["ClassPick", "SharedCounts", "class_raws", "host_zone_raws"]

#: class ids below this are kept one byte per feasible position (:attr:`ClassPick.class_of`, a
#: ``bytearray``), which :meth:`ClassPick._position` masks by ``bytes.translate``; a run with
#: more classes keeps them in a numpy array (about 20 classes in a window of 500 nodes)
_BYTE_IDS = 256


class ClassPick:
    """The classes of one run's feasible nodes, and the pick over them (see the module docstring)."""

    __slots__ = (
        "spread",
        "weight",
        "domain",
        "host_zone",
        "node_parts",
        "ids",
        "parts",
        "base",
        "sizes",
        "class_of",
        "live",
        "live_parts",
        "live_base",
        "ties",
        "shared",
        "values",
        "zone_terms",
    )

    def __init__(self, spread: Any, weight: int) -> None:
        # (no reference to the run: the run holds this pick, and a cycle between them would keep
        # the run's columns and NodeInfos alive until a collector pass instead of freeing them
        # when the search drops the run)
        self.spread = spread
        self.weight = weight
        #: per constraint: a domain one (its part is the node's row of per-value terms) or not
        #: (its part is the node's own term: hostname)
        self.domain: list[bool] = [not h for h in spread.hostname]
        #: kube's default constraints: hostname, then one domain (:meth:`pick` sums in one pass)
        self.host_zone = self.domain == [False, True]
        #: per constraint, where a node's part is read: the rows (a list: they never change) or
        #: the spread run's own term column (an array, changed in place as pods are assumed)
        self.node_parts: list[Any] = [
            spread.node_rows[i].tolist() if dom else spread.terms[i] for i, dom in enumerate(self.domain)
        ]
        #: class key (the parts, then the base) -> class id
        self.ids: dict[tuple[Any, ...], int] = {}
        #: per class id: its parts (row or term per constraint), its base, how many nodes it has
        self.parts: list[tuple[Any, ...]] = []
        self.base: list[int] = []
        self.sizes: list[int] = []
        #: the class id of each feasible position: a ``bytearray`` while every id is below
        #: :data:`_BYTE_IDS`, else a numpy array
        self.class_of: Any = None
        #: the non-empty classes, and per constraint their parts and their bases, in that order
        #: (made again only when a class empties or fills: :meth:`_relive`)
        self.live: list[int] = []
        self.live_parts: list[list[Any]] = []
        self.live_base: list[int] = []
        #: the tied nodes of the last pick (for the tests)
        self.ties = 0
        #: the table of counts the run reads when it joined one (:meth:`join`)
        self.shared: SharedCounts | None = None
        #: per domain constraint: the values of the rows of its value terms, in row order
        self.values: list[list[str]] = [list(rows) for rows in spread.value_rows]
        #: kube's default constraints over a shared table: the zone term of each value, kept by
        #: the table (:meth:`SharedCounts.terms_of`); None until the first such pick
        self.zone_terms: dict[str, float] | None = None

    def join(self, table: SharedCounts) -> bool:
        """Read the domain counts from ``table`` from now on, when this run's are the table's
        (a run just begun: nothing pending); the spread run then keeps only its hostname counts
        (:meth:`SpreadScoreRun.share_counts
        <scheduler.plugins.spread_run.SpreadScoreRun.share_counts>`)."""
        spread = self.spread
        if any(spread.pending) or spread.elsewhere_key() != table.key or spread.per_value != table.counts:
            return False
        self.shared = table
        spread.share_counts(table.counts)
        return True

    @classmethod
    def of(cls, run: PlacementRun) -> ClassPick | None:
        """The class pick of ``run`` (in arrays), or None when a precondition fails."""
        carried = [c for c in run.columns if c.carried is not None]
        if len(carried) != 1:
            return None
        (col,) = carried
        spread = col.carried
        if (
            col.plugin.name != "PodTopologySpread"
            or col.normalizer != "batch"
            or col.bounded is None
            or not getattr(spread, "arrays", False)
            or spread.ignored
            or not spread.constraints
            or not hasattr(spread, "catch_up_terms")
        ):
            return None
        import numpy as np  # (already imported: the run is in arrays; off the start-up path)

        self = cls(spread, col.weight)
        cols = [p if dom else p.tolist() for p, dom in zip(self.node_parts, self.domain, strict=True)]
        keys = list(zip(*cols, run.base.tolist(), strict=True))  # plain ints and floats
        ids = self.ids
        class_of = [ids.setdefault(k, len(ids)) for k in keys]  # (the length before the insert)
        self.sizes = [0] * len(ids)
        for k in ids:
            self.parts.append(k[:-1])
            self.base.append(k[-1])
        for i in class_of:
            self.sizes[i] += 1
        self.class_of = bytearray(class_of) if len(ids) <= _BYTE_IDS else np.array(class_of, dtype=np.intp)
        self._relive()
        return self

    def _relive(self) -> None:
        """:attr:`live` and its columns from the classes' sizes."""
        self.live = live = [c for c, n in enumerate(self.sizes) if n]
        parts = self.parts
        self.live_parts = [[parts[c][i] for c in live] for i in range(len(self.domain))]
        self.live_base = [self.base[c] for c in live]

    def moved(self, q: int, base: int) -> None:
        """The node at position ``q`` took a pod of the run: its hostname term and base (now
        ``base``, the run's) may have changed, and with them its class."""
        if self.host_zone:  # (kube's default constraints: the key as below, without the loop)
            parts = self.node_parts
            key: tuple[Any, ...] = (parts[0].item(q), parts[1][q], base)
        else:
            key = (
                *[p[q] if dom else p.item(q) for p, dom in zip(self.node_parts, self.domain, strict=True)],
                base,
            )
        sizes = self.sizes
        new = self.ids.get(key)
        if new is None:
            new = self.ids[key] = len(sizes)
            self.parts.append(key[:-1])
            self.base.append(key[-1])
            sizes.append(0)
        class_of = self.class_of
        old = int(class_of[q])
        if old != new:
            sizes[old] -= 1
            sizes[new] += 1
            if new >= _BYTE_IDS and type(class_of) is bytearray:
                import numpy as np  # (already imported: the run is in arrays)

                class_of = self.class_of = np.frombuffer(class_of, dtype=np.uint8).astype(np.intp)
            class_of[q] = new
            if not sizes[old] or sizes[new] == 1:
                self._relive()

    def pick(self, rng: random.Random) -> int | None:
        """The feasible position of the node the run's columns would pick, drawing from ``rng`` as
        they would; None when the columns must say (a normalized score out of range). A pick
        over the shared counts leaves the run's columns behind them (the run marks itself
        stale: :meth:`PlacementRun.next <scheduler.placement_run.PlacementRun.next>`)."""
        spread = self.spread
        if self.shared is None:
            spread.catch_up_terms()  # the per-value terms current; the columns are left behind
            terms = [None if vt is None else vt.tolist() for vt in spread.value_terms]
        elif self.host_zone:
            # kube's default constraints (hostname, then zone) over the shared counts: the zone's
            # terms as _shared_terms gives them, each class's raw summed as class_raws sums it
            # (its hostname term, plus its zone row's term, plus 0.5), in one pass
            # (the zone terms kept by the table as its counts change: SharedCounts.terms_of)
            zone = self.zone_terms
            if zone is None:
                zone = self.zone_terms = self.shared.terms_of(
                    1, spread.weights[1], spread.skews[1], self.values[1]
                )
            row_terms = list(map(zone.__getitem__, self.values[1]))
            row_terms.append(0.0)  # (the last row: nodes without the key)
            return self._pick_over(host_zone_raws(*self.live_parts, row_terms), rng)
        else:
            terms = _shared_terms(self.shared.counts, spread, self.values, self.domain)
        cols = [
            list(map(vt.__getitem__, parts)) if dom else parts
            for vt, parts, dom in zip(terms, self.live_parts, self.domain, strict=True)
        ]
        return self._pick_over(class_raws(cols), rng)

    def _pick_over(self, raws: list[int], rng: random.Random) -> int | None:
        """:meth:`pick` from the live classes' raw spreading scores ``raws``."""
        lo, hi = min(raws), max(raws)
        w, m = self.weight, MAX_NODE_SCORE
        if hi == 0:
            totals = [b + w * m for b in self.live_base]
        else:
            top = hi + lo
            at_lo, at_hi = m * (top - lo) // hi, m * (top - hi) // hi
            if min(at_lo, at_hi) < MIN_NODE_SCORE or max(at_lo, at_hi) > m:
                return None  # (the columns' NormalizeScore ends the run)
            totals = [b + w * (m * (top - r) // hi) for b, r in zip(self.live_base, raws, strict=True)]
        best = max(totals)
        live, sizes = self.live, self.sizes
        if totals.count(best) == 1:
            tied = [live[totals.index(best)]]
            ties = sizes[tied[0]]
        else:
            tied = [c for c, t in zip(live, totals, strict=True) if t == best]
            ties = sum(map(sizes.__getitem__, tied))
        self.ties = ties
        r = rng.randrange(ties) if ties > 1 else 0  # (no draw for one: score_totals.select)
        return self._position(tied, r)

    def _position(self, tied: list[int], r: int) -> int:
        """The ``r``-th position (feasible order) whose class is one of ``tied``."""
        import numpy as np  # (already imported: the run is in arrays)

        class_of = self.class_of
        if type(class_of) is bytearray:
            # the tied classes' mask by one byte translation, its positions read by numpy in
            # place: no class id array compared, no lookup table array built and indexed
            table = bytearray(256)  # (ids below _BYTE_IDS <= 256)
            for c in tied:
                table[c] = 1
            return int(np.frombuffer(class_of.translate(table), dtype=np.bool_).nonzero()[0][r])
        if len(tied) == 1:
            return int((class_of == tied[0]).nonzero()[0][r])
        lut = np.zeros(len(self.sizes), dtype=bool)
        lut[tied] = True
        return int(lut.take(class_of).nonzero()[0][r])


def class_raws(cols: list[list[float]]) -> list[int]:
    """Each class's raw spreading score from its terms, one list per constraint: the terms added
    in constraint order, then 0.5, truncated (``SpreadScoreRun._score_all``'s floats and
    rounding, in Python floats: the same IEEE additions)."""
    if len(cols) == 2:
        return [int(a + b + 0.5) for a, b in zip(cols[0], cols[1], strict=True)]
    sums = cols[0]
    for col in cols[1:]:
        sums = [a + b for a, b in zip(sums, col, strict=True)]
    return [int(t + 0.5) for t in sums]


def host_zone_raws(own: list[float], rows: list[int], row_terms: list[float]) -> list[int]:
    """:func:`class_raws` of two constraints, the first's terms ``own``, the second's the terms
    of rows ``rows`` of ``row_terms``: the same additions (first term, plus second, plus 0.5)
    without the second column built first."""
    return [int(t + row_terms[j] + 0.5) for t, j in zip(own, rows, strict=True)]


def _shared_terms(
    counts: list[dict[str, int]], spread: Any, values: list[list[str]], domain: list[bool]
) -> list[Any]:
    """Per domain constraint the term of each row's value from the shared counts, as
    :meth:`SpreadScoreRun.catch_up_terms` computes it (``count * weight + skew``; 0.0 in the
    last row, for nodes without the key); None for a hostname constraint."""
    out: list[Any] = []
    for i, dom in enumerate(domain):
        if not dom:
            out.append(None)
            continue
        at, w, skew = counts[i], spread.weights[i], spread.skews[i]
        out.append([at.get(v, 0) * w + skew for v in values[i]] + [0.0])
    return out


class SharedCounts:
    """The spreading domain counts of every window's run of a big gang's search, kept once.

    Each window's run counts the same pods into the same domains: every pod assumed anywhere adds
    to the count of its node's zone in each run (:meth:`SpreadScoreRun._elsewhere_adds
    <scheduler.plugins.spread_run.SpreadScoreRun._elsewhere_adds>` for the other windows' pods,
    ``_assumed_in_arrays`` for the run's own: the same rule), which
    :class:`~scheduler.placement_run.WindowedRuns` told each of the ten runs (pending counts,
    applied at its next pick). Here a run whose counts equal this table's when it begins
    (the same domains, the same counts, the same counting rule: ``elsewhere_key``) reads the
    table instead (:meth:`ClassPick.join`), and each assumed pod adds to it once (:meth:`add`),
    so its runs are told only of the pods on their own nodes (their Filter, node-local Scores
    and hostname counts). A pod the table is not told of drops it (``WindowedRuns``).
    """

    __slots__ = ("counts", "key", "spread", "terms")

    def __init__(self, spread: Any) -> None:
        #: per constraint: domain value -> count (empty for a hostname constraint)
        self.counts: list[dict[str, int]] = [dict(pv) for pv in spread.per_value]
        self.key = spread.elsewhere_key()
        #: a joined run's column: its counting rule is the table's (equal ``elsewhere_key``)
        self.spread = spread
        #: per (constraint, weight, skew) some joined run reads (:meth:`terms_of`): domain value ->
        #: ``count * weight + skew``, written again whenever :meth:`add` changes that count
        self.terms: dict[tuple[int, float, int], dict[str, float]] = {}

    def terms_of(self, i: int, weight: float, skew: int, values: list[str]) -> dict[str, float]:
        """Constraint ``i``'s term of each of ``values`` from the counts, ``count * weight + skew``
        (0 for a value not counted, as ``counts[i].get(v, 0)``), kept current by :meth:`add`
        from now on: a pick reads a run's ten zone terms instead of computing them again after
        every pod (the same floats: each is the same expression of the same count)."""
        key = (i, weight, skew)
        terms = self.terms.get(key)
        if terms is None:
            terms = self.terms[key] = {}
        at = self.counts[i]
        for v in values:
            if v not in terms:
                terms[v] = at.get(v, 0) * weight + skew
        return terms

    def add(self, pod_info: Any, node_info: Any) -> None:
        """``pod_info`` was assumed on ``node_info``: one more in each domain it counts in."""
        counts = self.counts
        for i, v in self.spread._elsewhere_adds(pod_info, node_info):
            at = counts[i]
            if v in at:
                n = at[v] = at[v] + 1
                if self.terms:
                    for (j, weight, skew), terms in self.terms.items():
                        if j == i and v in terms:
                            terms[v] = n * weight + skew
