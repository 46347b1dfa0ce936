"""Server-side apply and managedFields tracking (kube's field manager over structured-merge-diff)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.errors import StatusError
from apiserver.openapi import schema
from apiserver.patch.apply import (
    LAST_APPLIED_ANNOTATION,
    decode_managed_fields,
    record_update,
    server_side_apply,
)
from apiserver.patch.fieldpath import FieldSet, key, make_path

DEPLOYMENT = schema.for_gvk("apps", "v1", "Deployment")
STATEFULSET = schema.for_gvk("apps", "v1", "StatefulSet")
CONFIGMAP = schema.for_gvk("", "v1", "ConfigMap")
APPS = "apps/v1"
T0, T1, T2, T3 = (f"2030-01-01T00:00:0{i}Z" for i in range(4))


def deployment(replicas: int | None = 3, labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": APPS,
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            **spec,
        },
    }
    if replicas is not None:
        body["spec"]["replicas"] = replicas
    if labels is not None:
        body["metadata"]["labels"] = labels
    return body


def stored(obj: Obj) -> Obj:
    """What the registry would persist: the server-set identity fields filled in."""
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("uid", "uid-1")
    out["metadata"].setdefault("resourceVersion", "1")
    return out


def apply(
    live: Obj | None, body: Obj, manager: str, now: str, force: bool = False, node: Any = DEPLOYMENT
) -> Obj:
    out = server_side_apply(live, copy.deepcopy(body), manager, force, node, now, body["apiVersion"])
    return stored(out)


def entry(obj: Obj, manager: str, operation: str | None = None) -> Obj | None:
    for e in obj["metadata"].get("managedFields", []):
        if e["manager"] == manager and (operation is None or e["operation"] == operation):
            return e
    return None


def owned(obj: Obj, manager: str, operation: str | None = None) -> FieldSet:
    e = entry(obj, manager, operation)
    return FieldSet.from_fields_v1(e["fieldsV1"]) if e else FieldSet()


def conflict_of(excinfo: pytest.ExceptionInfo[StatusError]) -> tuple[str, list[dict[str, str]]]:
    err = excinfo.value
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.details is not None
    return err.message, err.details["causes"]


REPLICAS = make_path("spec", "replicas")


# -- apply --------------------------------------------------------------------------------------


def test_apply_creates_the_object_and_records_an_apply_entry() -> None:
    out = apply(None, deployment(labels={"app": "web"}), "kubectl", T0)
    assert out["spec"]["replicas"] == 3
    assert out["metadata"]["labels"] == {"app": "web"}
    [e] = out["metadata"]["managedFields"]
    assert {k: e[k] for k in ("manager", "operation", "apiVersion", "time", "fieldsType")} == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": APPS,
        "time": T0,
        "fieldsType": "FieldsV1",
    }
    fields_v1 = e["fieldsV1"]
    assert "f:apiVersion" not in fields_v1 and "f:kind" not in fields_v1
    assert fields_v1["f:metadata"] == {"f:labels": {"f:app": {}}}  # name/namespace are never owned
    assert fields_v1["f:spec"]["f:template"]["f:spec"] == {
        "f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}
    }


def test_reapplying_the_same_configuration_is_a_no_op() -> None:
    live = apply(None, deployment(), "kubectl", T0)
    again = server_side_apply(live, deployment(), "kubectl", False, DEPLOYMENT, T1, APPS)
    assert again == live
    assert entry(again, "kubectl")["time"] == T0  # type: ignore[index]


def test_a_value_owned_by_another_manager_conflicts() -> None:
    created = record_update(
        None, deployment(replicas=3), "kubectl-client-side-apply", "Update", DEPLOYMENT, T0, APPS
    )
    live = stored(created)
    with pytest.raises(StatusError) as excinfo:
        apply(live, deployment(replicas=5), "kubectl", T1)
    message, causes = conflict_of(excinfo)
    assert message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas'
    )
    assert causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
            "field": ".spec.replicas",
        }
    ]
    assert excinfo.value.status()["details"] == {"causes": causes}


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = apply(None, deployment(replicas=3, labels={"tier": "a"}), "alice", T0)
    live = apply(live, {**deployment(replicas=None), "spec": {"minReadySeconds": 4}}, "bob", T1)
    live["spec"]["minReadySeconds"] = 4
    body = deployment(replicas=5, labels={"tier": "b"}, minReadySeconds=9)
    with pytest.raises(StatusError) as excinfo:
        apply(live, body, "carol", T2)
    message, causes = conflict_of(excinfo)
    assert message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "alice":\n- .metadata.labels.tier\n- .spec.replicas\n'
        'conflicts with "bob":\n- .spec.minReadySeconds'
    )
    assert [c["field"] for c in causes] == [
        ".metadata.labels.tier",
        ".spec.replicas",
        ".spec.minReadySeconds",
    ]


def test_force_moves_ownership_to_the_applier() -> None:
    live = stored(record_update(None, deployment(replicas=3), "kube-scaler", "Update", DEPLOYMENT, T0, APPS))
    out = apply(live, deployment(replicas=5), "kubectl", T1, force=True)
    assert out["spec"]["replicas"] == 5
    assert REPLICAS in owned(out, "kubectl", "Apply")
    assert REPLICAS not in owned(out, "kube-scaler")
    # the rest of what the scaler wrote stays its own
    assert make_path("spec", "selector") in owned(out, "kube-scaler")


def test_a_field_dropped_from_the_configuration_is_removed() -> None:
    live = apply(None, deployment(labels={"a": "1", "b": "2"}), "kubectl", T0)
    out = apply(live, deployment(labels={"a": "1"}), "kubectl", T1)
    assert out["metadata"]["labels"] == {"a": "1"}
    assert make_path("metadata", "labels", "b") not in owned(out, "kubectl")
    out = apply(out, deployment(), "kubectl", T2)
    assert "labels" not in out["metadata"]


def test_a_field_another_manager_shares_is_kept() -> None:
    live = apply(None, deployment(labels={"a": "1", "b": "2"}), "alice", T0)
    live = apply(live, deployment(labels={"b": "2"}), "bob", T1)  # same value: shared, no conflict
    label_b = make_path("metadata", "labels", "b")
    assert label_b in owned(live, "alice") and label_b in owned(live, "bob")
    out = apply(live, deployment(labels={"a": "1"}), "alice", T2)
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert label_b not in owned(out, "alice") and label_b in owned(out, "bob")


def test_a_field_set_by_an_update_survives_an_apply_that_stops_setting_it() -> None:
    live = apply(None, deployment(labels={"a": "1"}), "kubectl", T0)
    patched = copy.deepcopy(live)
    patched["metadata"]["labels"]["a"] = "2"  # taken over by a merge patch
    live = stored(record_update(live, patched, "kubectl-patch", "Update", DEPLOYMENT, T1, APPS))
    out = apply(live, deployment(), "kubectl", T2)
    assert out["metadata"]["labels"] == {"a": "2"}


def test_a_struct_no_longer_applied_goes_away_whole() -> None:
    rolling = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    live = apply(None, deployment(strategy=rolling), "kubectl", T0)
    out = apply(live, deployment(strategy={"type": "RollingUpdate"}), "kubectl", T1)
    assert out["spec"]["strategy"] == {"type": "RollingUpdate"}
    out = apply(out, deployment(), "kubectl", T2)
    assert "strategy" not in out["spec"]


def test_containers_merge_by_name() -> None:
    live = apply(None, deployment(), "kubectl", T0)
    sidecar = deployment(replicas=None)
    sidecar["spec"] = {"template": {"spec": {"containers": [{"name": "log", "image": "fluent:2"}]}}}
    out = apply(live, sidecar, "injector", T1)
    containers = out["spec"]["template"]["spec"]["containers"]
    assert containers == [{"name": "c", "image": "nginx:1"}, {"name": "log", "image": "fluent:2"}]
    log = make_path("spec", "template", "spec", "containers", key({"name": "log"}))
    assert log in owned(out, "injector") and log not in owned(out, "kubectl")

    # the first applier changes its own container; the sidecar is untouched
    body = deployment()
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    out = apply(out, body, "kubectl", T2)
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"name": "c", "image": "nginx:2"},
        {"name": "log", "image": "fluent:2"},
    ]
    # and dropping its container removes only that one
    body["spec"]["template"]["spec"]["containers"] = [{"name": "web", "image": "nginx:2"}]
    out = apply(out, body, "kubectl", T3)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["log", "web"]


def test_apply_order_wins_for_shared_items_and_live_only_items_keep_their_place() -> None:
    base = deployment()
    base["spec"]["template"]["spec"]["containers"] = [{"name": n, "image": "i"} for n in ("a", "b", "c")]
    live = stored(record_update(None, base, "creator", "Update", DEPLOYMENT, T0, APPS))
    body = deployment()
    body["spec"]["template"]["spec"]["containers"] = [{"name": n, "image": "i"} for n in ("c", "a", "d")]
    out = apply(live, body, "kubectl", T1)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["b", "c", "a", "d"]


def test_statefulset_scheduling_is_merged_and_owned_by_the_schema() -> None:
    sts: Obj = {
        "apiVersion": APPS,
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "pg"}]},
            },
            "scheduling": {
                "schedulingPolicy": {"gang": {}},
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-tpl"}],
            },
        },
    }
    live = apply(None, sts, "kubectl", T0, node=STATEFULSET)
    fields_v1 = entry(live, "kubectl")["fieldsV1"]  # type: ignore[index]
    assert fields_v1["f:spec"]["f:scheduling"] == {
        "f:resourceClaims": {'k:{"name":"gpu"}': {".": {}, "f:name": {}, "f:resourceClaimTemplateName": {}}},
        "f:schedulingPolicy": {"f:gang": {}},
    }

    other = {
        "apiVersion": APPS,
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"scheduling": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "tpu-tpl"}]}},
    }
    with pytest.raises(StatusError) as excinfo:
        apply(live, other, "operator", T1, node=STATEFULSET)
    message, causes = conflict_of(excinfo)
    assert causes[0]["field"] == '.spec.scheduling.resourceClaims[name="gpu"].resourceClaimTemplateName'
    assert message.endswith(
        ': conflict with "kubectl": .spec.scheduling.resourceClaims[name="gpu"].resourceClaimTemplateName'
    )

    # another claim merges in by name
    other["spec"]["scheduling"]["resourceClaims"] = [{"name": "nic", "resourceClaimName": "nic-1"}]
    out = apply(live, other, "operator", T1, node=STATEFULSET)
    assert [c["name"] for c in out["spec"]["scheduling"]["resourceClaims"]] == ["gpu", "nic"]
    assert out["spec"]["scheduling"]["schedulingPolicy"] == {"gang": {}}


def test_an_object_without_managed_fields_is_owned_by_before_first_apply() -> None:
    live = stored(deployment(replicas=3))
    with pytest.raises(StatusError) as excinfo:
        apply(live, deployment(replicas=4), "ci", T1)
    message, _ = conflict_of(excinfo)
    assert (
        message
        == 'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas'
    )
    out = apply(live, deployment(replicas=3), "ci", T1)
    assert REPLICAS in owned(out, "before-first-apply", "Update") and REPLICAS in owned(out, "ci")


def test_kubectl_takes_over_fields_it_applied_client_side() -> None:
    csa = deployment(replicas=3)
    last_applied = json.dumps(csa, sort_keys=True)
    csa["metadata"]["annotations"] = {LAST_APPLIED_ANNOTATION: last_applied}
    live = stored(record_update(None, csa, "kubectl-client-side-apply", "Update", DEPLOYMENT, T0, APPS))

    out = apply(live, deployment(replicas=5), "kubectl", T1)
    assert out["spec"]["replicas"] == 5
    assert REPLICAS not in owned(out, "kubectl-client-side-apply")
    annotation = out["metadata"]["annotations"][LAST_APPLIED_ANNOTATION]
    assert json.loads(annotation)["spec"]["replicas"] == 5 and annotation.endswith("\n")

    # another manager gets no such pass
    with pytest.raises(StatusError):
        apply(live, deployment(replicas=5), "someone-else", T1)


def test_kubectl_still_conflicts_on_values_changed_since_its_client_side_apply() -> None:
    csa = deployment(replicas=3)
    csa["metadata"]["annotations"] = {LAST_APPLIED_ANNOTATION: json.dumps(csa)}
    live = stored(record_update(None, csa, "kubectl-client-side-apply", "Update", DEPLOYMENT, T0, APPS))
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 7
    live = stored(record_update(live, scaled, "kubectl-client-side-apply", "Update", DEPLOYMENT, T1, APPS))
    with pytest.raises(StatusError) as excinfo:
        apply(live, deployment(replicas=5), "kubectl", T2)
    assert conflict_of(excinfo)[1][0]["field"] == ".spec.replicas"


def test_null_in_the_configuration_clears_a_scalar() -> None:
    live = apply(None, deployment(replicas=3), "kubectl", T0)
    body = deployment()
    body["spec"]["replicas"] = None
    out = apply(live, body, "kubectl", T1)
    assert "replicas" not in out["spec"]
    assert REPLICAS in owned(out, "kubectl")


def test_status_on_the_main_resource_is_not_owned() -> None:
    body = {**deployment(), "status": {"replicas": 1}}
    out = apply(None, body, "kubectl", T0)
    assert "f:status" not in entry(out, "kubectl")["fieldsV1"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {**deployment(), "metadata": {"name": "web", "managedFields": []}},
            "metadata.managedFields must be nil",
        ),
        ({**deployment(), "kind": "StatefulSet"}, "invalid object type: apps/v1, Kind=StatefulSet"),
        (
            {**deployment(), "apiVersion": "apps/v1beta2"},
            "invalid object type: apps/v1beta2, Kind=Deployment",
        ),
    ],
)
def test_malformed_apply_bodies_are_bad_requests(body: Obj, message: str) -> None:
    with pytest.raises(StatusError) as excinfo:
        server_side_apply(None, body, "kubectl", False, DEPLOYMENT, T0, APPS, kind="Deployment")
    assert (excinfo.value.code, excinfo.value.reason, excinfo.value.message) == (400, "BadRequest", message)


def test_duplicate_keys_in_the_configuration_are_a_bad_request_with_kubes_message() -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["containers"].append({"name": "c", "image": "x"})
    with pytest.raises(StatusError) as excinfo:
        server_side_apply(None, body, "kubectl", False, DEPLOYMENT, T0, APPS)
    assert (excinfo.value.code, excinfo.value.reason) == (400, "BadRequest")
    assert excinfo.value.message == (
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): "
        '.spec.template.spec.containers: duplicate entries for key [name="c"]'
    )


def test_a_null_entry_of_an_associative_list_is_a_bad_request() -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["containers"].insert(0, None)
    with pytest.raises(StatusError) as excinfo:
        server_side_apply(None, body, "kubectl", False, DEPLOYMENT, T0, APPS)
    assert (excinfo.value.code, excinfo.value.reason) == (400, "BadRequest")
    assert excinfo.value.message.endswith(
        ".spec.template.spec.containers: element 0: associative list with keys may not have a null element"
    )


# -- updates ------------------------------------------------------------------------------------


def test_record_update_after_a_merge_patch_moves_ownership() -> None:
    live = apply(None, deployment(replicas=3), "kubectl", T0)
    patched = copy.deepcopy(live)
    patched["spec"]["replicas"] = 5  # what ``kubectl patch --type merge -p '{"spec":{"replicas":5}}'`` stores
    out = stored(record_update(live, patched, "kubectl-patch", "Update", DEPLOYMENT, T1, APPS))
    assert owned(out, "kubectl-patch", "Update") == FieldSet([REPLICAS])
    assert entry(out, "kubectl-patch")["time"] == T1  # type: ignore[index]
    assert REPLICAS not in owned(out, "kubectl", "Apply")
    assert [e["operation"] for e in out["metadata"]["managedFields"]] == ["Apply", "Update"]

    with pytest.raises(StatusError) as excinfo:
        apply(out, deployment(replicas=3), "kubectl", T2)
    assert conflict_of(excinfo)[0].endswith('conflict with "kubectl-patch" using apps/v1: .spec.replicas')


def test_an_update_that_changes_nothing_leaves_managed_fields_alone() -> None:
    live = stored(record_update(None, deployment(), "creator", "Update", DEPLOYMENT, T0, APPS))
    out = record_update(live, copy.deepcopy(live), "other", "Update", DEPLOYMENT, T1, APPS)
    assert out["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_create_records_set_fields_with_granular_map_markers() -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"x": "y"}},
        "data": {"k": "v"},
    }
    out = record_update(None, cm, "kubectl-create", "Update", CONFIGMAP, T0, "v1")
    [e] = out["metadata"]["managedFields"]
    assert e["fieldsV1"] == {
        "f:data": {".": {}, "f:k": {}},
        "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
    }
    assert (e["manager"], e["operation"], e["apiVersion"], e["time"]) == (
        "kubectl-create",
        "Update",
        "v1",
        T0,
    )


def test_request_managed_fields_are_honoured_reset_or_ignored() -> None:
    live = stored(record_update(None, deployment(), "creator", "Update", DEPLOYMENT, T0, APPS))
    update = copy.deepcopy(live)

    update["metadata"]["managedFields"] = []  # reset: and an untracked object stays untracked
    update["spec"]["replicas"] = 9
    out = record_update(live, update, "editor", "Update", DEPLOYMENT, T1, APPS)
    assert "managedFields" not in out["metadata"]

    update["metadata"]["managedFields"] = [{"manager": "x", "operation": "Bogus"}]  # garbage: use live's
    out = record_update(live, update, "editor", "Update", DEPLOYMENT, T1, APPS)
    assert owned(out, "editor") == FieldSet([REPLICAS])
    assert entry(out, "creator") is not None

    explicit = [{"manager": "mine", "operation": "Apply", "apiVersion": APPS, "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:selector": {}}}}]  # fmt: skip
    update["metadata"]["managedFields"] = explicit
    out = record_update(live, update, "editor", "Update", DEPLOYMENT, T1, APPS)
    assert {e["manager"] for e in out["metadata"]["managedFields"]} == {"mine", "editor"}

    status = copy.deepcopy(live)
    status["metadata"]["managedFields"] = []
    status["status"] = {"replicas": 3}
    out = record_update(
        live, status, "kube-controller-manager", "Update", DEPLOYMENT, T1, APPS, subresource="status"
    )
    assert entry(out, "creator") is not None  # a subresource write cannot touch managed fields
    e = entry(out, "kube-controller-manager")
    assert e is not None and e["subresource"] == "status"
    assert e["fieldsV1"] == {"f:status": {".": {}, "f:replicas": {}}}


def test_an_empty_manager_means_already_tracked() -> None:
    created = server_side_apply(None, deployment(), "kubectl", False, DEPLOYMENT, T0, APPS)
    assert record_update(None, created, "", "Update", DEPLOYMENT, T0, APPS) == created


def test_main_resource_updates_do_not_own_status() -> None:
    body = {**deployment(), "status": {"replicas": 1}}
    out = record_update(None, body, "creator", "Update", DEPLOYMENT, T0, APPS)
    assert "f:status" not in entry(out, "creator")["fieldsV1"]  # type: ignore[index]


def test_more_than_ten_update_managers_fold_into_ancient_changes() -> None:
    cm: Obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "d"},
        "data": {},
    }
    live = stored(record_update(None, cm, "m00", "Update", CONFIGMAP, "2030-01-01T00:00:00Z", "v1"))
    for i in range(1, 12):
        new = copy.deepcopy(live)
        new["data"][f"k{i}"] = "v"
        live = stored(
            record_update(live, new, f"m{i:02d}", "Update", CONFIGMAP, f"2030-01-01T00:00:{i:02d}Z", "v1")
        )
    managers = [e["manager"] for e in live["metadata"]["managedFields"]]
    assert len(managers) == 10
    assert "ancient-changes" in managers and "m11" in managers and "m01" not in managers
    ancient = owned(live, "ancient-changes")
    assert make_path("data", "k1") in ancient and make_path("data", "k2") in ancient


def test_decode_rejects_entries_kube_would_not_decode() -> None:
    good = {
        "manager": "a",
        "operation": "Update",
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {},
    }
    assert len(decode_managed_fields([good])) == 1
    for broken in (
        {**good, "operation": "Patch"},
        {**good, "apiVersion": ""},
        {**good, "fieldsType": ""},
        {**good, "fieldsType": "FieldsV2"},
        {**good, "fieldsV1": {"nope": {}}},
    ):
        with pytest.raises(ValueError):
            decode_managed_fields([broken])
