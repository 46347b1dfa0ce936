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


def _rev(sts: Obj, uid: str = "r-1", rv: str = "5", name: str = "web-abc") -> Obj:
    return {"metadata": {"name": name, "uid": uid, "resourceVersion": rv}, "data": utils.revision_data(sts)}


def test_prototypes_follow_the_revision_version_and_the_set_generation_and_only_the_last_ones_are_kept() -> (
    None
):
    memo = RevisionMemo()
    sts = _sts()
    rev = _rev(sts)
    (p1,) = memo.prototypes(sts, "default/web", rev)
    assert utils.stamp_pod(sts, p1, 0) == utils.new_versioned_pod(
        sts, sts["spec"]["template"], sts["spec"]["template"], "web-abc", "web-abc", 0
    )
    (p2,) = memo.prototypes(copy.deepcopy(sts), "default/web", rev)
    assert p2 is p1
    changed = copy.deepcopy(rev)
    changed["metadata"]["resourceVersion"] = "6"
    changed["data"]["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    (p3,) = memo.prototypes(sts, "default/web", changed)
    assert p3["metadata"]["labels"]["v"] == "2"
    # a new generation (another serviceName, say) builds again: the set's spec is in every pod
    renamed = _sts(generation=2)
    renamed["spec"]["serviceName"] = "other"
    (p4,) = memo.prototypes(renamed, "default/web", changed)
    assert p4 is not p3 and p4["spec"]["subdomain"] == "other"
    memo.forget("default/web")
    (p5,) = memo.prototypes(sts, "default/web", rev)
    assert p5 == p1 and p5 is not p1


def test_a_set_without_generation_gets_fresh_prototypes() -> None:
    memo = RevisionMemo()
    sts = _sts(generation=0)
    rev = _rev(sts)
    (p1,) = memo.prototypes(sts, "default/web", rev)
    (p2,) = memo.prototypes(sts, "default/web", rev)
    assert p1 == p2 and p1 is not p2


class _StatusClient:
    """Stores status writes like a server: a new resourceVersion per write."""

    def __init__(self) -> None:
        self.writes: list[Obj] = []

    async def update_status(self, gvr: object, obj: Obj, namespace: str = "", **_: object) -> Obj:
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
