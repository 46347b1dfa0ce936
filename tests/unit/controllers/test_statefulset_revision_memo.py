"""The StatefulSet sync's revision memo: recomputed exactly when one of its inputs changes."""

from __future__ import annotations

import copy

from apiserver.api.types import Obj
from controllers.statefulset import utils
from controllers.statefulset.revisions import RevisionMemo
from controllers.testing import statefulset


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
