"""What a StatefulSet sync reads of the spec, once per spec generation (controllers/statefulset/specfacts.py)."""

from __future__ import annotations

import copy
import itertools

from apiserver.api.types import Obj
from apiserver.meta import get_path
from controllers.statefulset import utils
from controllers.statefulset.specfacts import SpecFactsCache, spec_facts
from controllers.testing import statefulset


def _sts(generation: int = 1, uid: str = "u-1", **spec: object) -> Obj:
    sts = statefulset("web", 3, **spec)
    sts["metadata"].update(uid=uid, generation=generation)
    return sts


def _variants() -> list[Obj]:
    out = []
    for policy, strategy, min_ready, start, claims, limit in itertools.product(
        ("OrderedReady", "Parallel"),
        (
            None,
            {"type": "OnDelete"},
            {"type": "RollingUpdate"},
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 2, "maxUnavailable": "50%"}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
        ),
        (0, 5),
        (None, 3),
        ((), ("data",)),
        (None, 0, 4),
    ):
        sts = _sts(policy=policy, claims=claims, minReadySeconds=min_ready)
        if strategy is not None:
            sts["spec"]["updateStrategy"] = strategy
        if start is not None:
            sts["spec"]["ordinals"] = {"start": start}
        if limit is not None:
            sts["spec"]["revisionHistoryLimit"] = limit
        out.append(sts)
    return out


def test_every_fact_is_what_the_helpers_read() -> None:
    for sts in _variants():
        f = spec_facts(sts)
        assert f.replicas == utils.replicas_of(sts)
        assert f.start == utils.start_ordinal(sts)
        assert f.min_ready == utils.min_ready_seconds(sts)
        assert f.parallel == utils.allows_burst(sts)
        assert f.strategy == get_path(sts, "spec.updateStrategy.type", utils.ROLLING_UPDATE)
        assert f.partition == int(get_path(sts, "spec.updateStrategy.rollingUpdate.partition", 0) or 0)
        assert f.max_unavailable == utils.max_unavailable(sts)
        assert f.has_claims == bool(utils.claim_templates(sts))
        assert f.history_limit == int(get_path(sts, "spec.revisionHistoryLimit", 10) or 0)


def test_read_once_per_uid_and_generation() -> None:
    cache = SpecFactsCache()
    sts = _sts()
    first = cache.get("default/web", sts)
    assert cache.get("default/web", copy.deepcopy(sts)) is first
    scaled = _sts(generation=2)
    scaled["spec"]["replicas"] = 5
    assert cache.get("default/web", scaled).replicas == 5
    recreated = _sts(uid="u-2")
    recreated["spec"]["replicas"] = 7
    assert cache.get("default/web", recreated).replicas == 7


def test_a_set_without_generation_is_read_every_time() -> None:
    cache = SpecFactsCache()
    sts = _sts(generation=0)
    assert cache.get("default/web", sts).replicas == 3
    sts["spec"]["replicas"] = 4
    assert cache.get("default/web", sts).replicas == 4
