"""Pure StatefulSet helpers: ordinals, identity, storage, health, revisions, claim retention."""

from __future__ import annotations

import pytest

from controllers import history
from controllers.statefulset import utils
from controllers.testing import statefulset

NOW = 1_800_000_000.0


def sts(**kw: object) -> dict:
    s = statefulset("web", 3, **kw)  # type: ignore[arg-type]
    s["metadata"]["uid"] = "sts-uid"
    return s


def pod(
    name: str,
    *,
    uid: str = "",
    phase: str = "",
    ready: bool | None = None,
    ready_since: str = "",
    **labels: str,
) -> dict:
    p: dict = {
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels)},
        "spec": {},
        "status": {},
    }
    if uid:
        p["metadata"]["uid"] = uid
    if phase:
        p["status"]["phase"] = phase
    if ready is not None:
        p["status"]["conditions"] = [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": ready_since or "2027-01-15T08:00:00Z",
            }
        ]
    return p


@pytest.mark.parametrize(
    ("name", "parent", "ordinal"),
    [
        ("web-0", "web", 0),
        ("web-12", "web", 12),
        ("my-db-3", "my-db", 3),
        ("web", "", -1),
        ("web-x", "", -1),
        ("web-99999999999", "web", -1),  # beyond int32: not an ordinal
    ],
)
def test_parent_and_ordinal_parse_pod_names(name: str, parent: str, ordinal: int) -> None:
    assert utils.parent_and_ordinal(name) == (parent, ordinal)


def test_ordinal_range_honours_ordinals_start() -> None:
    s = sts(ordinals={"start": 5})
    assert (utils.start_ordinal(s), utils.end_ordinal(s)) == (5, 7)
    assert utils.pod_in_ordinal_range(pod("web-5"), s)
    assert not utils.pod_in_ordinal_range(pod("web-4"), s)
    assert not utils.pod_in_ordinal_range(pod("web-8"), s)


def test_new_pod_has_identity_storage_and_controller_ref() -> None:
    s = sts(claims=["data"])
    p = utils.new_pod(s, s["spec"]["template"], 2)
    md = p["metadata"]
    assert md["name"] == "web-2"
    assert md["generateName"] == "web-"  # GetPodFromTemplate's, kept beside the ordinal name as kube does
    assert md["labels"] == {"app": "web", utils.POD_NAME_LABEL: "web-2", utils.POD_INDEX_LABEL: "2"}
    assert md["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "web",
            "uid": "sts-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert p["spec"]["hostname"] == "web-2"
    assert p["spec"]["subdomain"] == "web"
    assert p["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-2"}}]
    assert utils.identity_matches(s, p)
    assert utils.storage_matches(s, p)


def test_identity_and_storage_mismatches_are_detected_and_fixed() -> None:
    s = sts(claims=["data"])
    p = pod("web-1")
    assert not utils.identity_matches(s, p)
    assert not utils.storage_matches(s, p)
    utils.update_identity(s, p)
    utils.update_storage(s, p)
    assert utils.identity_matches(s, p)
    assert utils.storage_matches(s, p)


def test_claims_carry_the_selector_labels() -> None:
    s = sts(claims=["data", "logs"])
    claims = utils.claims_for(s, 4)
    assert [(t, c["metadata"]["name"]) for t, c in claims] == [("data", "data-web-4"), ("logs", "logs-web-4")]
    assert claims[0][1]["metadata"]["labels"] == {"app": "web"}


def test_versioned_pod_below_partition_uses_current_revision() -> None:
    s = sts(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    cur = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "v1"}]}}
    upd = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "v2"}]}}
    low = utils.new_versioned_pod(s, cur, upd, "web-1", "web-2", 1)
    high = utils.new_versioned_pod(s, cur, upd, "web-1", "web-2", 2)
    assert (utils.revision_of(low), low["spec"]["containers"][0]["image"]) == ("web-1", "v1")
    assert (utils.revision_of(high), high["spec"]["containers"][0]["image"]) == ("web-2", "v2")


def _template(labels: dict[str, str], **spec: object) -> dict:
    return {
        "metadata": {"labels": labels, "annotations": {"a": "1"}, "finalizers": ["x/y"]},
        "spec": {"containers": [{"name": "main", "image": "v1"}], **spec},
    }


@pytest.mark.parametrize(
    ("kw", "template"),
    [
        ({}, None),
        ({"claims": ["data", "logs"]}, None),
        ({"serviceName": ""}, None),
        ({"ordinals": {"start": 5}}, None),
        # the template already names identity labels, a hostname and a volume of a claim template
        (
            {"claims": ["data"]},
            _template(
                {utils.POD_INDEX_LABEL: "9", "app": "web", utils.REVISION_LABEL: "old"},
                hostname="h",
                volumes=[{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}],
            ),
        ),
        ({}, _template({"app": "web", utils.POD_NAME_LABEL: "p"}, volumes=[])),
    ],
)
def test_a_stamped_prototype_is_the_pod_new_versioned_pod_builds(kw: dict, template: dict | None) -> None:
    """The same object, key order included (the bytes a create sends), for every ordinal."""
    import orjson

    s = sts(**kw)
    tmpl = template if template is not None else s["spec"]["template"]
    proto = utils.pod_prototype(s, tmpl, "web-7d9")
    before = orjson.dumps(proto)
    start = utils.start_ordinal(s)
    for ordinal in range(start, start + 3):
        stamped = utils.stamp_pod(s, proto, ordinal)
        built = utils.new_versioned_pod(s, tmpl, tmpl, "web-7d9", "web-7d9", ordinal)
        assert orjson.dumps(stamped) == orjson.dumps(built)
        stamped["spec"]["containers"][0]["image"] = "changed"  # a copy: the prototype is untouched
    assert orjson.dumps(proto) == before


@pytest.mark.parametrize(
    ("p", "healthy", "available"),
    [
        (pod("a", uid="u", phase="Pending"), False, False),
        (pod("a", uid="u", phase="Running", ready=False), False, False),
        (pod("a", uid="u", phase="Running", ready=True, ready_since="2027-01-15T07:59:00Z"), True, True),
        (pod("a", uid="u", phase="Running", ready=True, ready_since="2027-01-15T07:59:55Z"), True, False),
    ],
)
def test_health_and_availability(p: dict, healthy: bool, available: bool) -> None:
    now = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    assert utils.is_healthy(p) is healthy
    assert utils.is_running_and_available(p, 10, now) is available


def test_max_unavailable_rounds_percent_down_but_at_least_one() -> None:
    s = sts(
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": "50%"}}
    )
    s["spec"]["replicas"] = 5
    assert utils.max_unavailable(s) == 2
    s["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = "10%"
    assert utils.max_unavailable(s) == 1
    s["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = 3
    assert utils.max_unavailable(s) == 3


def test_revision_data_is_the_template_with_replace_directive() -> None:
    s = sts()
    data = utils.revision_data(s)
    assert data["spec"]["template"]["$patch"] == "replace"
    rev = {"data": data}
    assert utils.template_of_revision(rev) == s["spec"]["template"]


def test_fnv1_and_safe_encoding_match_go() -> None:
    assert history.fnv1_32(b"a") == 0x050C5D7E  # FNV-1 (not 1a) test vector
    assert history.safe_encode("0123456789") == "456789bcdf"


def test_revision_names_are_stable_and_collision_count_changes_them() -> None:
    data = utils.revision_data(sts())
    h0 = history.hash_revision(data, 0)
    assert h0 == history.hash_revision(data, 0)
    assert h0 != history.hash_revision(data, 1)
    rev = history.new_controller_revision(sts(), "apps/v1", "StatefulSet", {"app": "web"}, data, 1, 0)
    assert rev["metadata"]["name"] == f"web-{h0}"
    assert rev["metadata"]["labels"] == {"app": "web", history.HASH_LABEL: h0}
    assert rev["revision"] == 1


def test_raw_data_is_go_json() -> None:
    assert (
        history.raw_data({"b": 1, "a": {"d": "<x&y>", "c": [1, 2]}})
        == b'{"a":{"c":[1,2],"d":"\\u003cx\\u0026y\\u003e"},"b":1}'
    )


def test_complete_rolling_update_promotes_update_revision() -> None:
    s = sts()
    status = {
        "replicas": 3,
        "readyReplicas": 3,
        "updatedReplicas": 3,
        "currentReplicas": 1,
        "currentRevision": "a",
        "updateRevision": "b",
    }
    utils.complete_rolling_update(s, status)
    assert (status["currentRevision"], status["currentReplicas"]) == ("b", 3)


SET_REF = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "name": "web",
    "uid": "sts-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}
POD_REF = {
    "apiVersion": "v1",
    "kind": "Pod",
    "name": "web-4",
    "uid": "pod-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}


@pytest.mark.parametrize(
    ("when_deleted", "when_scaled", "in_range", "expected"),
    [
        ("Retain", "Retain", True, []),
        ("Delete", "Retain", True, [SET_REF]),
        ("Delete", "Retain", False, [SET_REF]),
        ("Retain", "Delete", True, []),
        ("Retain", "Delete", False, [{**POD_REF}]),
        ("Delete", "Delete", True, [SET_REF]),
        ("Delete", "Delete", False, [{**POD_REF}]),
    ],
)
def test_claim_owner_refs_follow_the_retention_policy(
    when_deleted: str, when_scaled: str, in_range: bool, expected: list
) -> None:
    s = sts(retention=(when_deleted, when_scaled))
    s["spec"]["replicas"] = 5 if in_range else 3
    p = pod("web-4", uid="pod-uid")
    claim = {"metadata": {"name": "data-web-4", "ownerReferences": []}}
    refs = utils.claim_owner_refs(claim, s, p)
    assert refs == expected
    assert utils.claim_owner_up_to_date({"metadata": {"ownerReferences": refs}}, s, p)
    if expected:
        assert not utils.claim_owner_up_to_date(claim, s, p)


def test_claim_with_another_controller_is_left_alone() -> None:
    s = sts(retention=("Delete", "Retain"))
    other = {"apiVersion": "v1", "kind": "Thing", "name": "x", "uid": "x", "controller": True}
    claim = {"metadata": {"ownerReferences": [other]}}
    assert utils.has_unexpected_controller(claim, s, pod("web-0", uid="p"))
    assert utils.claim_owner_up_to_date(claim, s, pod("web-0", uid="p"))
    assert utils.claim_owner_refs(claim, s, pod("web-0", uid="p")) == [other]


def test_status_counts() -> None:
    pods = [
        pod("web-0", uid="0", phase="Running", ready=True, **{utils.REVISION_LABEL: "r1"}),
        pod("web-1", uid="1", phase="Running", ready=False, **{utils.REVISION_LABEL: "r2"}),
        pod("web-2", **{utils.REVISION_LABEL: "r2"}),  # not created yet
    ]
    assert utils.count_pods(pods, 0, NOW, "r1", "r2") == {
        "replicas": 2,
        "readyReplicas": 1,
        "currentReplicas": 1,
        "updatedReplicas": 1,
        "availableReplicas": 1,
    }


@pytest.mark.parametrize(
    "sts",
    [
        {},
        {"spec": None},
        {"spec": "x"},
        {"spec": {}},
        {"spec": {"volumeClaimTemplates": None}},
        {"spec": {"volumeClaimTemplates": []}},
        {"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}, "junk", None]}},
        {"spec": {"volumeClaimTemplates": {"metadata": {}}}},
    ],
)
def test_claim_templates_reads_what_the_dotted_path_reads(sts: dict) -> None:
    from apiserver.meta import get_path

    want = [t for t in get_path(sts, "spec.volumeClaimTemplates", []) or [] if isinstance(t, dict)]
    assert utils.claim_templates(sts) == want
