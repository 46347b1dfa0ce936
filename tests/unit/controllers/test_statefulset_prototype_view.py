"""Pod prototypes built from a revision's stored template without copying it first
(``utils.revision_template_view``) against the general ``template_of_revision`` copy, and no
aliasing between the pods stamped from them and the revision."""

from __future__ import annotations

import copy

import orjson

from apiserver.api.types import Obj
from controllers import history
from controllers.statefulset import utils as su
from controllers.statefulset.podfacts import pod_facts, stamped_pod_facts
from controllers.testing import statefulset


def _revision(sts: Obj) -> Obj:
    return history.new_controller_revision(sts, su.API_VERSION, su.KIND, {}, su.revision_data(sts), 1, 0)


def _sets() -> list[Obj]:
    plain = statefulset("web", 3)
    rich = statefulset("db", 2, claims=["data"])
    tmd = rich["spec"]["template"]["metadata"]
    tmd["annotations"] = {"a": "<&>", "b": ""}
    tmd["finalizers"] = ["example.com/keep"]
    rich["spec"]["template"]["spec"]["volumes"] = [{"name": "v", "emptyDir": {}}]
    no_service = statefulset("bare", 1)
    del no_service["spec"]["serviceName"]
    no_meta = statefulset("nometa", 1)
    del no_meta["spec"]["template"]["metadata"]
    return [plain, rich, no_service, no_meta]


def test_the_view_gives_the_same_prototype_and_pods() -> None:
    for sts in _sets():
        sts["metadata"].update(uid=f"uid-{sts['metadata']['name']}", generation=1)
        rev = _revision(sts)
        general = su.pod_prototype(sts, su.template_of_revision(rev), "web-abc")
        viewed = su.pod_prototype(sts, su.revision_template_view(rev), "web-abc")
        assert orjson.dumps(viewed) == orjson.dumps(general)  # key order included
        for ordinal in range(3):
            assert orjson.dumps(su.stamp_pod(sts, viewed, ordinal)) == orjson.dumps(
                su.new_versioned_pod(
                    sts,
                    su.template_of_revision(rev),
                    su.template_of_revision(rev),
                    "web-abc",
                    "web-abc",
                    ordinal,
                )
            )


def test_a_prototype_shares_nothing_mutable_with_the_revision() -> None:
    for sts in _sets():
        rev = _revision(sts)
        before = copy.deepcopy(rev)
        proto = su.pod_prototype(sts, su.revision_template_view(rev), "web-abc")
        md = proto["metadata"]
        md["labels"]["x"] = "y"
        md.setdefault("annotations", {})["x"] = "y"
        md.setdefault("finalizers", []).append("x")
        proto["spec"]["containers"][0]["image"] = "changed"
        assert rev == before


def test_a_stamped_pods_facts_are_derived_from_its_prototypes() -> None:
    """``stamped_pod_facts`` equals ``pod_facts`` of the stamped pod, over names that parse oddly."""
    for name in ["web", "web-1", "a-0-b", "x" * 40, "db-00"]:
        for sts in _sets():
            sts["metadata"].update(name=name, uid=f"uid-{name}", generation=1)
            rev = _revision(sts)
            proto = su.pod_prototype(sts, su.revision_template_view(rev), f"{name}-abc")
            proto_facts = pod_facts(proto)
            for ordinal in (0, 1, 7, 12345, 2**31 - 1, 2**31):
                pod = su.stamp_pod(sts, proto, ordinal)
                assert stamped_pod_facts(proto_facts, pod) == pod_facts(pod)
