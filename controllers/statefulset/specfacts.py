"""What a StatefulSet sync reads of the set's spec, read once per spec generation.

Every sync asks the spec for the same dozen values (replicas, the first ordinal,
minReadySeconds, the pod management and update strategies, partition, maxUnavailable, the claim
templates, the history limit), each a walk of nested ``.get`` calls, several of them more than
once. They change only with the spec, and in apps/v1 every change of the spec bumps
``metadata.generation`` (the same premise as the selector and candidate-revision memos), so
:class:`SpecFactsCache` reads them once per (set UID, generation). A set without a generation
(not from an API server) is read afresh on every sync.

Each field is computed by the :mod:`controllers.statefulset.utils` helper the algorithm used
before, so every decision is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.api.types import Obj
from apiserver.meta import get_path
from controllers.statefulset import utils


@dataclass(frozen=True, slots=True)
class SpecFacts:
    """One spec generation of one set, as the algorithm reads it."""

    uid: str
    generation: int
    replicas: int
    start: int
    min_ready: int
    #: ``podManagementPolicy: Parallel`` (``allowsBurst``)
    parallel: bool
    #: ``updateStrategy.type`` (RollingUpdate when unset)
    strategy: str
    #: ``updateStrategy.rollingUpdate.partition`` (0 when unset)
    partition: int
    max_unavailable: int
    has_claims: bool
    #: ``revisionHistoryLimit`` (10 when unset)
    history_limit: int


def spec_facts(sts: Obj) -> SpecFacts:
    """Read :class:`SpecFacts` from ``sts`` (pure)."""
    md = sts.get("metadata") or {}
    return SpecFacts(
        uid=md.get("uid", ""),
        generation=int(md.get("generation") or 0),
        replicas=utils.replicas_of(sts),
        start=utils.start_ordinal(sts),
        min_ready=utils.min_ready_seconds(sts),
        parallel=utils.allows_burst(sts),
        strategy=get_path(sts, "spec.updateStrategy.type", utils.ROLLING_UPDATE),
        partition=int(get_path(sts, "spec.updateStrategy.rollingUpdate.partition", 0) or 0),
        max_unavailable=utils.max_unavailable(sts),
        has_claims=bool(utils.claim_templates(sts)),
        history_limit=int(get_path(sts, "spec.revisionHistoryLimit", 10) or 0),
    )


class SpecFactsCache:
    """:class:`SpecFacts` per set key, re-read when the set's UID or generation changes."""

    def __init__(self) -> None:
        self._by_key: dict[str, SpecFacts] = {}

    def get(self, key: str, sts: Obj) -> SpecFacts:
        md = sts.get("metadata") or {}
        generation = int(md.get("generation") or 0)
        hit = self._by_key.get(key)
        if hit is not None and generation and hit.generation == generation and hit.uid == md.get("uid", ""):
            return hit
        facts = spec_facts(sts)
        if generation:
            self._by_key[key] = facts
        return facts

    def forget(self, key: str) -> None:
        """The set is gone."""
        self._by_key.pop(key, None)
