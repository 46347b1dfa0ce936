"""CRDs served in-process: conditions, discovery, OpenAPI, Tables, subresources, versions, patches,
deletion with the cleanup finalizer — what a client of the API observes."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import GVR
from apiserver.openapi import documents
from apiserver.server import discovery, tables
from gangplane.controlplane import ControlPlane
from tests.crd_support import CRDS, CRONTABS, condition, crontab, crontab_crd
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio

CRD_NAME = "crontabs.stable.example.com"


async def make_crd(client: Any, crd: Obj | None = None) -> Obj:
    await client.create(CRDS, crd or crontab_crd())
    return await client.get(CRDS, (crd or crontab_crd())["metadata"]["name"])


async def test_created_crd_is_established_and_served_at_once(client: Any) -> None:
    crd = await make_crd(client)
    names = condition(crd, "NamesAccepted")
    assert names is not None and (names["status"], names["reason"], names["message"]) == (
        "True",
        "NoConflicts",
        "no conflicts found",
    )
    est = condition(crd, "Established")
    assert est is not None and (est["status"], est["reason"]) == ("True", "InitialNamesAccepted")
    assert crd["status"]["acceptedNames"]["plural"] == "crontabs"
    assert crd["status"]["storedVersions"] == ["v1"]
    created = await client.create(CRONTABS, crontab("a"), "default")
    assert created["apiVersion"] == "stable.example.com/v1"
    assert created["spec"]["replicas"] == 1  # schema default
    assert created["metadata"]["generation"] == 1


async def test_name_conflict_leaves_names_not_accepted(client: Any) -> None:
    await make_crd(client)
    other = crontab_crd(plural="crontabz", singular="crontabz", kind="CronTabZ", shortNames=["ct"])
    crd = await make_crd(client, other)
    names = condition(crd, "NamesAccepted")
    assert names is not None and (names["status"], names["reason"], names["message"]) == (
        "False",
        "ShortNamesConflict",
        '"ct" is already in use',
    )
    est = condition(crd, "Established")
    assert est is not None and (est["status"], est["reason"]) == ("False", "NotAccepted")
    with pytest.raises(errors.StatusError) as e:
        await client.list(GVR("stable.example.com", "v1", "crontabz"), "default")
    assert e.value.code == 404


async def test_invalid_crd_is_a_422_with_field_paths(client: Any) -> None:
    bad = crontab_crd()
    bad["spec"]["versions"][0]["storage"] = False
    with pytest.raises(errors.StatusError) as e:
        await client.create(CRDS, bad)
    assert e.value.code == 422
    causes = e.value.status()["details"]["causes"]
    assert causes[0]["field"] == "spec.versions"
    assert causes[0]["message"].endswith("must have exactly one version marked as storage version")


async def test_discovery_lists_the_custom_resource(cp: ControlPlane, client: Any) -> None:
    await make_crd(client)
    legacy = discovery.api_resource_list(cp.api.registry, "stable.example.com", "v1", cp.api.gates)
    assert legacy is not None
    entries = {r["name"]: r for r in legacy["resources"]}
    assert entries["crontabs"]["shortNames"] == ["ct"] and entries["crontabs"]["categories"] == ["all"]
    assert entries["crontabs"]["namespaced"] is True
    assert entries["crontabs/scale"]["kind"] == "Scale" and entries["crontabs/status"]["kind"] == "CronTab"
    agg = discovery.aggregated_discovery(cp.api.registry, False, cp.api.gates)
    group = next(g for g in agg["items"] if g["metadata"]["name"] == "stable.example.com")
    res = group["versions"][0]["resources"][0]
    assert (
        res["resource"] == "crontabs"
        and res["responseKind"]["kind"] == "CronTab"
        and res["scope"] == "Namespaced"
    )
    assert {s["subresource"] for s in res["subresources"]} == {"scale", "status"}


async def test_openapi_documents_the_schema(cp: ControlPlane, client: Any) -> None:
    await make_crd(client)
    index = documents.openapi_v3_index(cp.api.registry)
    assert "apis/stable.example.com/v1" in index["paths"]
    doc = orjson.loads(documents.openapi_v3_group_version(cp.api.registry, "stable.example.com", "v1"))
    schema = doc["components"]["schemas"]["com.example.stable.v1.CronTab"]
    assert schema["properties"]["spec"]["properties"]["cronSpec"]["description"] == "When to run."
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "stable.example.com", "kind": "CronTab", "version": "v1"}
    ]
    patch = doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    v2 = orjson.loads(documents.openapi_v2(cp.api.registry))
    assert "com.example.stable.v1.CronTab" in v2["definitions"]


async def test_table_uses_printer_columns(cp: ControlPlane, client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("a", replicas=2), "default")
    rd = cp.api.registry.get("stable.example.com", "v1", "crontabs")
    assert rd is not None
    obj = await client.get(CRONTABS, "a", "default")
    table = tables.to_table(rd.group, rd.plural, [obj], datetime.now(UTC), "1", printer=rd.printer)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Spec", "Replicas", "Image", "Age"]
    assert table["rows"][0]["cells"][:4] == ["a", "*/5 * * * *", 2, "cron:1"]


async def test_schema_and_cel_validation_reach_the_client(client: Any) -> None:
    await make_crd(client)
    with pytest.raises(errors.StatusError) as e:
        await client.create(CRONTABS, crontab("a", replicas=11), "default")
    assert e.value.code == 422
    assert (
        e.value.message
        == 'CronTab.stable.example.com "a" is invalid: spec: Invalid value: "object": replicas must not exceed maxReplicas'
    )
    await client.create(CRONTABS, crontab("b", replicas=3, allowScaleDown=False), "default")
    obj = await client.get(CRONTABS, "b", "default")
    obj["spec"]["replicas"] = 2
    with pytest.raises(errors.StatusError) as e:
        await client.update(CRONTABS, obj, "default")
    assert e.value.status()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "object": cannot scale down from 3 to 2',
            "field": "spec",
        }
    ]


async def test_status_subresource_splits_spec_and_status(client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("a"), "default")
    obj = await client.get(CRONTABS, "a", "default")
    obj["status"] = {"replicas": 1, "phase": "Running"}
    obj["spec"]["image"] = "ignored:2"
    after = await client.update_status(CRONTABS, obj, "default")
    assert after["status"] == {"replicas": 1, "phase": "Running"}
    assert after["spec"]["image"] == "cron:1" and after["metadata"]["generation"] == 1
    after["status"] = {"phase": "Lost"}
    after["spec"]["image"] = "cron:2"
    main = await client.update(CRONTABS, after, "default")
    assert main["status"] == {"replicas": 1, "phase": "Running"}
    assert main["spec"]["image"] == "cron:2" and main["metadata"]["generation"] == 2


async def test_scale_subresource_reads_and_writes_the_crd_paths(cp: ControlPlane, client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("a", replicas=2), "default")
    obj = await client.get(CRONTABS, "a", "default")
    obj["status"] = {"replicas": 2, "selector": "app=cron"}
    await client.update_status(CRONTABS, obj, "default")
    rd = cp.api.registry.get("stable.example.com", "v1", "crontabs")
    assert rd is not None
    scale = cp.api.scale_get(rd, "default", "a")
    assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 2, "selector": "app=cron"}
    cp.api.scale_patch(rd, "default", "a", {"spec": {"replicas": 5}}, "application/merge-patch+json")
    assert (await client.get(CRONTABS, "a", "default"))["spec"]["replicas"] == 5
    with pytest.raises(errors.StatusError) as e:
        cp.api.scale_patch(rd, "default", "a", {"spec": {"replicas": 50}}, "application/merge-patch+json")
    assert e.value.code == 422  # the CEL rule still guards the object


async def test_strategic_merge_patch_is_415_and_merge_patch_replaces_lists(client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("a", ports=[{"name": "a", "port": 1}]), "default")
    with pytest.raises(errors.StatusError) as e:
        await client.patch(
            CRONTABS,
            "a",
            {"spec": {"image": "x"}},
            "default",
            patch_type="application/strategic-merge-patch+json",
        )
    assert e.value.code == 415
    out = await client.patch(CRONTABS, "a", {"spec": {"ports": [{"name": "b", "port": 2}]}}, "default")
    assert out["spec"]["ports"] == [{"name": "b", "port": 2}]


async def test_server_side_apply_honours_list_map_and_set_markers(client: Any) -> None:
    await make_crd(client)
    first = crontab("a", ports=[{"name": "http", "port": 80}], tags=["x"])
    await client.patch(
        CRONTABS, "a", first, "default", patch_type="application/apply-patch+yaml", field_manager="one"
    )
    second = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "a"},
        "spec": {"ports": [{"name": "grpc", "port": 90}], "tags": ["y"]},
    }
    out = await client.patch(
        CRONTABS, "a", second, "default", patch_type="application/apply-patch+yaml", field_manager="two"
    )
    assert out["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "grpc", "port": 90}]
    assert out["spec"]["tags"] == ["x", "y"]
    conflict = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "a"},
        "spec": {"ports": [{"name": "http", "port": 81}]},
    }
    with pytest.raises(errors.StatusError) as e:
        await client.patch(
            CRONTABS, "a", conflict, "default", patch_type="application/apply-patch+yaml", field_manager="two"
        )
    assert e.value.code == 409
    assert e.value.status()["details"]["causes"][0]["field"] == '.spec.ports[name="http"].port'


async def test_versions_share_storage_and_rewrite_api_version(cp: ControlPlane, client: Any) -> None:
    crd = crontab_crd()
    v1 = crd["spec"]["versions"][0]
    beta = copy.deepcopy(v1)
    beta.update(name="v1beta1", storage=False)
    crd["spec"]["versions"] = [beta, v1]
    await make_crd(client, crd)
    beta_gvr = GVR("stable.example.com", "v1beta1", "crontabs")
    made = await client.create(beta_gvr, crontab("a", version="v1beta1"), "default")
    assert made["apiVersion"] == "stable.example.com/v1beta1"
    as_v1 = await client.get(CRONTABS, "a", "default")
    assert as_v1["apiVersion"] == "stable.example.com/v1"
    assert (
        cp.api.store.get(("stable.example.com", "crontabs"), ("default", "a")).obj["apiVersion"]
        == "stable.example.com/v1"
    )
    listed = await client.list(beta_gvr, "default")
    assert [i["apiVersion"] for i in listed["items"]] == ["stable.example.com/v1beta1"]
    groups = discovery.served_groups(cp.api.registry, cp.api.gates)
    assert groups["stable.example.com"] == ["v1", "v1beta1"]


async def test_updating_a_crd_changes_what_is_served(client: Any) -> None:
    await make_crd(client)
    crd = await client.get(CRDS, CRD_NAME)
    v2 = copy.deepcopy(crd["spec"]["versions"][0])
    v2["name"] = "v2"
    crd["spec"]["versions"][0]["storage"] = False
    crd["spec"]["versions"].append(v2)
    updated = await client.update(CRDS, crd)
    assert updated["status"]["storedVersions"] == ["v1", "v2"]
    made = await client.create(
        GVR("stable.example.com", "v2", "crontabs"), crontab("a", version="v2"), "default"
    )
    assert made["apiVersion"] == "stable.example.com/v2"
    crd = await client.get(CRDS, CRD_NAME)
    crd["spec"]["versions"][0]["served"] = False
    await client.update(CRDS, crd)
    with pytest.raises(errors.StatusError) as e:
        await client.get(CRONTABS, "a", "default")
    assert e.value.code == 404


async def test_cluster_scoped_custom_resources(client: Any) -> None:
    await make_crd(client, crontab_crd(scope="Cluster"))
    body = crontab("a")
    del body["metadata"]["namespace"]
    made = await client.create(CRONTABS, body)
    assert "namespace" not in made["metadata"]


async def test_deleting_a_crd_deletes_its_objects_after_their_finalizers(client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("free"), "default")
    held = crontab("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(CRONTABS, held, "default")
    await client.delete(CRDS, CRD_NAME)
    crd = await client.get(CRDS, CRD_NAME)
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    term = condition(crd, "Terminating")
    assert term is not None and (term["status"], term["reason"], term["message"]) == (
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    )
    listed = await client.list(CRONTABS, "default")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["held"]
    assert listed["items"][0]["metadata"]["deletionTimestamp"]
    with pytest.raises(errors.StatusError) as e:
        await client.create(CRONTABS, crontab("late"), "default")
    assert (e.value.code, e.value.message) == (
        405,
        "create not allowed while custom resource definition is terminating",
    )
    await client.patch(CRONTABS, "held", {"metadata": {"finalizers": None}}, "default")
    assert await wait_for_object(client, CRDS, CRD_NAME, cond=lambda o: o is None) is None
    with pytest.raises(errors.StatusError) as e:
        await client.list(CRONTABS, "default")
    assert e.value.code == 404


async def test_conflicting_crd_is_accepted_once_the_holder_is_deleted(client: Any) -> None:
    await make_crd(client)
    other = crontab_crd(plural="crontabz", singular="crontabz", kind="CronTabZ", shortNames=["ct"])
    await make_crd(client, other)
    await client.delete(CRDS, CRD_NAME)
    got = await wait_for_object(
        client,
        CRDS,
        "crontabz.stable.example.com",
        cond=lambda o: o is not None and (condition(o, "Established") or {}).get("status") == "True",
    )
    assert got is not None and got["status"]["acceptedNames"]["shortNames"] == ["ct"]


async def test_watch_of_custom_resources_ends_when_the_crd_is_deleted(client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("a"), "default")
    events = []
    stream = client.watch(CRONTABS, "default")
    first = await stream.__anext__()
    events.append(first.type)
    await client.delete(CRDS, CRD_NAME)
    async for ev in stream:
        events.append(ev.type)
    assert events == ["ADDED", "DELETED"]


async def test_schema_tightening_ratchets_unchanged_fields(client: Any) -> None:
    await make_crd(client)
    await client.create(CRONTABS, crontab("a", image="x" * 40), "default")
    crd = await client.get(CRDS, CRD_NAME)
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["image"]["maxLength"] = 10
    await client.update(CRDS, crd)
    # the too-long image is left alone by an unrelated change ...
    out = await client.patch(CRONTABS, "a", {"spec": {"replicas": 2}}, "default")
    assert out["spec"]["replicas"] == 2
    # ... but a changed image must fit the new schema
    with pytest.raises(errors.StatusError) as e:
        await client.patch(CRONTABS, "a", {"spec": {"image": "y" * 40}}, "default")
    assert e.value.status()["details"]["causes"][0]["message"] == "Too long: may not be more than 10 bytes"


async def test_reads_prune_and_default_by_the_stored_version_schema(cp: ControlPlane, client: Any) -> None:
    crd = crontab_crd()
    v1 = crd["spec"]["versions"][0]
    loose = copy.deepcopy(v1)
    loose.update(name="v1beta1", storage=False)
    loose["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] = True
    crd["spec"]["versions"] = [loose, v1]
    await make_crd(client, crd)
    beta = GVR("stable.example.com", "v1beta1", "crontabs")
    made = await client.create(beta, crontab("a", version="v1beta1", free="kept by v1beta1"), "default")
    stored = cp.api.store.get(("stable.example.com", "crontabs"), ("default", "a")).obj
    assert stored["spec"]["free"] == "kept by v1beta1"
    # stored as v1, whose schema does not know the field: every read (the create's answer too)
    # decodes it away, as kube's storage codec does
    assert "free" not in made["spec"]
    assert "free" not in (await client.get(CRONTABS, "a", "default"))["spec"]
    assert "free" not in (await client.get(beta, "a", "default"))["spec"]


async def test_selectable_fields_and_deprecated_versions(client: Any) -> None:
    crd = crontab_crd()
    v1 = crd["spec"]["versions"][0]
    v1["selectableFields"] = [{"jsonPath": ".spec.mode"}]
    v1["deprecated"] = True
    await make_crd(client, crd)
    await client.create(CRONTABS, crontab("a", mode="Allow"), "default")
    await client.create(CRONTABS, crontab("b", mode="Forbid"), "default")
    listed = await client.list(CRONTABS, "default", field_selector="spec.mode=Forbid")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["b"]
    with pytest.raises(errors.StatusError) as e:
        await client.list(CRONTABS, "default", field_selector="spec.image=x")
    assert e.value.code == 400


async def test_rules_wait_for_type_errors_to_be_fixed(client: Any) -> None:
    await make_crd(client)
    with pytest.raises(errors.StatusError) as e:
        await client.create(CRONTABS, crontab("a", replicas="many"), "default")
    assert [c["message"] for c in e.value.status()["details"]["causes"]] == [
        'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        "Invalid value: null: some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation",
    ]


async def test_server_side_apply_replaces_atomic_maps(client: Any) -> None:
    crd = crontab_crd()
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec["labels"] = {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "additionalProperties": {"type": "string"},
    }
    spec["notes"] = {"type": "object", "additionalProperties": {"type": "string"}}
    await make_crd(client, crd)
    first = crontab("a", labels={"a": "1"}, notes={"a": "1"})
    await client.patch(
        CRONTABS, "a", first, "default", patch_type="application/apply-patch+yaml", field_manager="one"
    )
    second = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "a"},
        "spec": {"labels": {"b": "2"}, "notes": {"b": "2"}},
    }
    with pytest.raises(errors.StatusError) as e:
        await client.patch(
            CRONTABS, "a", second, "default", patch_type="application/apply-patch+yaml", field_manager="two"
        )
    assert [c["field"] for c in e.value.status()["details"]["causes"]] == [".spec.labels"]
    out = await client.patch(
        CRONTABS,
        "a",
        second,
        "default",
        patch_type="application/apply-patch+yaml",
        field_manager="two",
        force=True,
    )
    assert out["spec"]["labels"] == {"b": "2"}  # atomic: replaced whole
    assert out["spec"]["notes"] == {"a": "1", "b": "2"}  # granular: merged key by key


async def test_list_kind_comes_from_the_crd(client: Any) -> None:
    await make_crd(client, crontab_crd(listKind="CronTabCollection"))
    await client.create(CRONTABS, crontab("a"), "default")
    assert (await client.list(CRONTABS, "default"))["kind"] == "CronTabCollection"


async def test_conflicting_rename_keeps_the_established_kind_served(client: Any) -> None:
    await make_crd(client)
    await make_crd(client, crontab_crd(plural="widgets", singular="widget", kind="Widget", shortNames=["wd"]))
    crd = await client.get(CRDS, CRD_NAME)
    crd["spec"]["names"]["shortNames"] = ["ct", "wd"]
    crd["spec"]["names"]["categories"] = ["all", "cron"]
    await client.update(CRDS, crd)
    crd = await client.get(CRDS, CRD_NAME)
    names = condition(crd, "NamesAccepted")
    assert names is not None and (names["status"], names["reason"], names["message"]) == (
        "False",
        "ShortNamesConflict",
        '"wd" is already in use',
    )
    accepted = crd["status"]["acceptedNames"]
    assert accepted["shortNames"] == ["ct"] and accepted["categories"] == ["all", "cron"]
    assert (condition(crd, "Established") or {}).get("status") == "True"
    await client.create(CRONTABS, crontab("still-served"), "default")


async def test_watch_of_a_version_ends_when_it_stops_being_served(client: Any) -> None:
    crd = crontab_crd()
    v1 = crd["spec"]["versions"][0]
    beta = copy.deepcopy(v1)
    beta.update(name="v1beta1", storage=False)
    crd["spec"]["versions"] = [beta, v1]
    await make_crd(client, crd)
    beta_gvr = GVR("stable.example.com", "v1beta1", "crontabs")
    await client.create(CRONTABS, crontab("a"), "default")
    beta_events: list[str] = []
    stream = client.watch(beta_gvr, "default")
    beta_events.append((await stream.__anext__()).type)
    v1_stream = client.watch(CRONTABS, "default")
    assert (await v1_stream.__anext__()).type == "ADDED"
    current = await client.get(CRDS, CRD_NAME)
    current["spec"]["versions"][0]["served"] = False
    await client.update(CRDS, current)
    async for ev in stream:
        beta_events.append(ev.type)
    assert beta_events == ["ADDED"]  # the stream ended
    await client.create(CRONTABS, crontab("b"), "default")
    ev = await v1_stream.__anext__()
    assert (ev.type, ev.object["metadata"]["name"]) == ("ADDED", "b")  # v1's watch goes on
    await v1_stream.aclose()


async def test_served_versions_get_local_api_services(client: Any) -> None:
    apiservices = GVR("apiregistration.k8s.io", "v1", "apiservices")
    await make_crd(client)
    svc = await client.get(apiservices, "v1.stable.example.com")
    assert svc["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert svc["spec"] == {
        "group": "stable.example.com",
        "version": "v1",
        "groupPriorityMinimum": 1000,
        "versionPriority": 100,
    }
    await client.delete(CRDS, CRD_NAME)
    assert (
        await wait_for_object(client, apiservices, "v1.stable.example.com", cond=lambda o: o is None) is None
    )
