"""What a StatefulSet sync keeps between syncs: revision work once per input, its own status write until the cache has it."""

from __future__ import annotations

import copy

import pytest

from apiserver.api.types import Obj
from controllers.statefulset import utils
from controllers.statefulset.revisions import RevisionMemo
from controllers.testing import statefulset

pytestmark = pytest.mark.anyio


def _sts(generation: int = 1, **annotations: str) -> Obj:
    sts = statefulset("web", 2)
    sts["metadata"].update(uid="u-1", generation=generation, annotations=dict(annotations))
    return sts


class Builds:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, sts: Obj) -> Obj:
        self.calls += 1
        return {"metadata": {"name": f"web-{self.calls}"}, "data": utils.revision_data(sts)}


def test_candidate_is_built_once_per_generation_annotations_and_collision_count() -> None:
    memo, build = RevisionMemo(), Builds()
    sts = _sts()
    first = memo.candidate(sts, "default/web", 1, 0, lambda: build(sts))
    again = memo.candidate(copy.deepcopy(sts), "default/web", 2, 0, lambda: build(sts))
    assert build.calls == 1
    assert (first["revision"], again["revision"]) == (1, 2)
    assert first["data"] == again["data"]
    for changed, collision in ((_sts(generation=2), 0), (_sts(generation=2, a="b"), 0), (_sts(2, a="b"), 1)):
        memo.candidate(changed, "default/web", 3, collision, lambda s=changed: build(s))
    assert build.calls == 4


def test_a_set_without_generation_is_never_memoized() -> None:
    memo, build = RevisionMemo(), Builds()
    sts = _sts(generation=0)
    for n in (1, 2):
        assert memo.candidate(sts, "default/web", n, 0, lambda: build(sts))["revision"] == n
    assert build.calls == 2


def test_a_recreated_set_gets_its_own_candidate() -> None:
    memo, build = RevisionMemo(), Builds()
    old, new = _sts(), _sts()
    new["metadata"]["uid"] = "u-2"
    memo.candidate(old, "default/web", 1, 0, lambda: build(old))
    memo.candidate(new, "default/web", 1, 0, lambda: build(new))
    assert build.calls == 2


def test_templates_follow_the_revision_version_and_only_the_last_ones_are_kept() -> None:
    memo = RevisionMemo()
    sts = _sts()
    rev = {"metadata": {"uid": "r-1", "resourceVersion": "5"}, "data": utils.revision_data(sts)}
    (t1,) = memo.templates("default/web", rev)
    assert "$patch" not in t1 and t1 == sts["spec"]["template"]
    (t2,) = memo.templates("default/web", rev)
    assert t2 is t1
    changed = copy.deepcopy(rev)
    changed["metadata"]["resourceVersion"] = "6"
    changed["data"]["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    (t3,) = memo.templates("default/web", changed)
    assert t3["metadata"]["labels"]["v"] == "2"
    memo.forget("default/web")
    (t4,) = memo.templates("default/web", rev)
    assert t4 == t1 and t4 is not t1


class _StatusClient:
    """Stores status writes like a server: a new resourceVersion per write."""

    def __init__(self) -> None:
        self.writes: list[Obj] = []

    async def update_status(self, gvr: object, obj: Obj, namespace: str = "") -> Obj:
        out = copy.deepcopy(obj)
        out["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        self.writes.append(out)
        return out


async def test_a_sync_reads_its_own_status_write_until_the_cache_has_it() -> None:
    """No second write of a status already stored, no stale resourceVersion (a conflict) meanwhile."""
    from apiserver.meta import Clock
    from controllers.statefulset.control import StatefulSetControl

    client = _StatusClient()
    control = StatefulSetControl(client, None, None, Clock())  # type: ignore[arg-type]
    cached = _sts()
    cached["metadata"]["resourceVersion"] = "7"
    status = {"observedGeneration": 1, "replicas": 2, "currentRevision": "web-1", "updateRevision": "web-1"}
    await control._write_status(cached, dict(status))
    fresh = control.newest("default/web", cached)
    assert fresh["metadata"]["resourceVersion"] == "8" and fresh["status"]["replicas"] == 2
    await control._write_status(fresh, dict(status))
    assert len(client.writes) == 1  # equal to what is stored: not sent
    # the cache caught up: it is used again, and the remembered write is dropped
    caught_up = {**fresh, "metadata": {**fresh["metadata"]}}
    assert control.newest("default/web", caught_up) is caught_up
    assert control.newest("default/web", cached) is cached
    # a set recreated under the name (another uid) never gets the old set's object
    await control._write_status(cached, dict(status))
    other = copy.deepcopy(cached)
    other["metadata"]["uid"] = "u-2"
    assert control.newest("default/web", other) is other
