"""The generic registry through the in-process client: the verbs' semantics and their Status errors."""

from __future__ import annotations

import asyncio

import pytest

from apiserver import errors
from apiserver.client.interface import CONFIGMAPS, NAMESPACES, PODS, STATEFULSETS
from apiserver.registry.generic import JSON_PATCH, MERGE_PATCH
from tests.helpers import cm

pytestmark = pytest.mark.anyio


def pod(name: str, ns: str = "default", node: str = "") -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def sts(name: str, replicas: int = 1) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "serviceName": name,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


async def test_create_sets_server_metadata(client) -> None:
    out = await client.create(CONFIGMAPS, cm("a", {"k": "v"}))
    md = out["metadata"]
    assert md["uid"] and md["resourceVersion"] and md["creationTimestamp"].endswith("Z")
    assert "generation" not in md  # configmaps carry no generation, like kube
    s = await client.create(STATEFULSETS, sts("web"))
    assert s["metadata"]["generation"] == 1


async def test_generate_name(client) -> None:
    obj = cm("")
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "gen-"
    a = await client.create(CONFIGMAPS, obj)
    b = await client.create(CONFIGMAPS, obj)
    assert a["metadata"]["name"].startswith("gen-") and len(a["metadata"]["name"]) == 9
    assert a["metadata"]["name"] != b["metadata"]["name"]


async def test_already_exists_not_found_and_conflict_statuses(client) -> None:
    await client.create(CONFIGMAPS, cm("a"))
    with pytest.raises(errors.StatusError) as e:
        await client.create(CONFIGMAPS, cm("a"))
    assert (e.value.code, e.value.reason) == (409, "AlreadyExists")
    assert e.value.status()["details"] == {"name": "a", "kind": "configmaps"}
    assert e.value.message == 'configmaps "a" already exists'
    with pytest.raises(errors.StatusError) as e:
        await client.get(CONFIGMAPS, "missing", "default")
    assert (e.value.code, e.value.message) == (404, 'configmaps "missing" not found')
    cur = await client.get(CONFIGMAPS, "a", "default")
    cur["data"] = {"x": "1"}
    await client.update(CONFIGMAPS, cur)
    cur["data"] = {"x": "2"}  # stale resourceVersion
    with pytest.raises(errors.StatusError) as e:
        await client.update(CONFIGMAPS, cur)
    assert (e.value.code, e.value.reason) == (409, "Conflict")
    assert "the object has been modified" in e.value.message
    assert (await client.get(CONFIGMAPS, "a", "default"))["data"] == {"x": "1"}


async def test_create_in_missing_namespace_is_404_and_terminating_is_403(cp, client) -> None:
    with pytest.raises(errors.StatusError) as e:
        await client.create(CONFIGMAPS, cm("a", ns="nope"))
    assert (e.value.code, e.value.message) == (404, 'namespaces "nope" not found')
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
    await client.delete(NAMESPACES, "doomed")
    with pytest.raises(errors.StatusError) as e:
        await client.create(CONFIGMAPS, cm("a", ns="doomed"))
    assert e.value.code == 403
    assert "because it is being terminated" in e.value.message


async def test_update_without_change_keeps_resource_version(client) -> None:
    a = await client.create(CONFIGMAPS, cm("a", {"k": "v"}))
    b = await client.update(CONFIGMAPS, a)
    assert a["metadata"]["resourceVersion"] == b["metadata"]["resourceVersion"]


async def test_generation_bumps_only_on_spec_change(client) -> None:
    s = await client.create(STATEFULSETS, sts("web"))
    s2 = await client.patch(STATEFULSETS, "web", {"metadata": {"labels": {"x": "y"}}}, "default")
    assert s2["metadata"]["generation"] == 1
    s3 = await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 3}}, "default")
    assert s3["metadata"]["generation"] == 2
    assert s["metadata"]["uid"] == s3["metadata"]["uid"]


async def test_merge_and_json_patch(client) -> None:
    await client.create(CONFIGMAPS, cm("a", {"k": "v", "gone": "x"}))
    out = await client.patch(
        CONFIGMAPS, "a", {"data": {"gone": None, "n": "1"}}, "default", patch_type=MERGE_PATCH
    )
    assert out["data"] == {"k": "v", "n": "1"}
    out = await client.patch(
        CONFIGMAPS,
        "a",
        [{"op": "replace", "path": "/data/k", "value": "w"}],
        "default",
        patch_type=JSON_PATCH,
    )
    assert out["data"]["k"] == "w"
    with pytest.raises(errors.StatusError) as e:
        await client.patch(
            CONFIGMAPS,
            "a",
            [{"op": "test", "path": "/data/k", "value": "nope"}],
            "default",
            patch_type=JSON_PATCH,
        )
    assert e.value.code == 422
    with pytest.raises(errors.StatusError) as e:
        await client.patch(CONFIGMAPS, "a", [{"op": "bogus"}], "default", patch_type=JSON_PATCH)
    assert e.value.code == 400
    with pytest.raises(errors.StatusError) as e:
        await client.patch(
            CONFIGMAPS,
            "a",
            {"metadata": {"resourceVersion": "1"}, "data": {"k": "z"}},
            "default",
            patch_type=MERGE_PATCH,
        )
    assert e.value.code == 409
    assert (await client.get(CONFIGMAPS, "a", "default"))["data"]["k"] == "w"


async def test_status_subresource_separation(client) -> None:
    await client.create(STATEFULSETS, sts("web"))
    cur = await client.get(STATEFULSETS, "web", "default")
    cur["status"] = {"replicas": 7}
    cur["spec"]["replicas"] = 2
    after = await client.update(STATEFULSETS, cur)
    assert after["spec"]["replicas"] == 2 and (after.get("status") or {}).get("replicas") != 7
    after["status"] = {"replicas": 5}
    after["spec"]["replicas"] = 9
    st = await client.update_status(STATEFULSETS, after)
    assert st["status"]["replicas"] == 5 and st["spec"]["replicas"] == 2


async def test_scale_subresource(client) -> None:
    await client.create(STATEFULSETS, sts("web", 2))
    scale = await client.get_subresource(STATEFULSETS, "web", "scale", "default")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2 and scale["status"]["selector"] == "app=web"
    scale["spec"]["replicas"] = 4
    out = await client.update_subresource(STATEFULSETS, "web", "scale", scale, "default")
    assert out["spec"]["replicas"] == 4
    out = await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 1}}, "default", subresource="scale")
    assert (await client.get(STATEFULSETS, "web", "default"))["spec"]["replicas"] == 1


async def test_binding_sets_node_once(client) -> None:
    await client.create(PODS, pod("p"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    await client.create_subresource(PODS, "p", "binding", binding, "default")
    p = await client.get(PODS, "p", "default")
    assert p["spec"]["nodeName"] == "n1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in p["status"]["conditions"])
    with pytest.raises(errors.StatusError) as e:
        await client.create_subresource(PODS, "p", "binding", binding, "default")
    assert e.value.code == 409


async def test_finalizers_hold_deletion_until_removed(client) -> None:
    obj = cm("a")
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(CONFIGMAPS, obj)
    await client.delete(CONFIGMAPS, "a", "default")
    held = await client.get(CONFIGMAPS, "a", "default")
    assert held["metadata"]["deletionTimestamp"]
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(errors.StatusError) as e:  # no new finalizers on a deleting object
        held["metadata"]["finalizers"] = ["example.com/hold", "example.com/more"]
        await client.update(CONFIGMAPS, held)
    assert e.value.code == 422
    await client.patch(CONFIGMAPS, "a", {"metadata": {"finalizers": None}}, "default")
    with pytest.raises(errors.StatusError):
        await client.get(CONFIGMAPS, "a", "default")


async def test_propagation_policies_add_gc_finalizers(client) -> None:
    await client.create(CONFIGMAPS, cm("f"))
    await client.create(CONFIGMAPS, cm("o"))
    await client.delete(CONFIGMAPS, "f", "default", propagation_policy="Foreground")
    await client.delete(CONFIGMAPS, "o", "default", propagation_policy="Orphan")
    assert (await client.get(CONFIGMAPS, "f", "default"))["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert (await client.get(CONFIGMAPS, "o", "default"))["metadata"]["finalizers"] == ["orphan"]
    with pytest.raises(errors.StatusError) as e:
        await client.delete(CONFIGMAPS, "o", "default", propagation_policy="Sideways")
    assert e.value.code == 422


async def test_graceful_pod_deletion(client) -> None:
    await client.create(PODS, pod("unbound"))
    out = await client.delete(PODS, "unbound", "default")
    assert out["metadata"]["name"] == "unbound"
    with pytest.raises(errors.StatusError):
        await client.get(PODS, "unbound", "default")  # unscheduled pods go at once
    await client.create(PODS, pod("bound", node="n1"))
    await client.delete(PODS, "bound", "default")
    p = await client.get(PODS, "bound", "default")
    assert p["metadata"]["deletionGracePeriodSeconds"] == 30
    await client.delete(PODS, "bound", "default", grace_period_seconds=0)
    with pytest.raises(errors.StatusError):
        await client.get(PODS, "bound", "default")


async def test_delete_preconditions_and_dry_run(client) -> None:
    a = await client.create(CONFIGMAPS, cm("a"))
    with pytest.raises(errors.StatusError) as e:
        await client.delete(CONFIGMAPS, "a", "default", preconditions={"uid": "other"})
    assert e.value.code == 409 and "Precondition failed" in e.value.message
    await client.delete(CONFIGMAPS, "a", "default", dry_run=True)
    assert (await client.get(CONFIGMAPS, "a", "default"))["metadata"]["uid"] == a["metadata"]["uid"]
    dry = await client.create(CONFIGMAPS, cm("b"), dry_run=True)
    assert dry["metadata"]["name"] == "b"
    with pytest.raises(errors.StatusError):
        await client.get(CONFIGMAPS, "b", "default")


async def test_delete_collection(client) -> None:
    for i in range(3):
        await client.create(CONFIGMAPS, cm(f"c{i}", labels={"app": "x" if i < 2 else "y"}))
    await client.delete_collection(CONFIGMAPS, "default", label_selector="app=x")
    names = [i["metadata"]["name"] for i in (await client.list(CONFIGMAPS, "default"))["items"]]
    assert names == ["c2"]


async def test_list_pagination_is_a_consistent_snapshot(client) -> None:
    for i in range(5):
        await client.create(CONFIGMAPS, cm(f"c{i}"))
    page1 = await client.list(CONFIGMAPS, "default", limit=2)
    assert len(page1["items"]) == 2 and page1["metadata"]["continue"]
    await client.delete(CONFIGMAPS, "c3", "default")  # after the snapshot
    await client.create(CONFIGMAPS, cm("c9"))
    page2 = await client.list(CONFIGMAPS, "default", limit=10, continue_=page1["metadata"]["continue"])
    assert [i["metadata"]["name"] for i in page2["items"]] == ["c2", "c3", "c4"]
    assert page2["metadata"]["resourceVersion"] == page1["metadata"]["resourceVersion"]
    with pytest.raises(errors.StatusError) as e:
        await client.list(CONFIGMAPS, "default", continue_="garbage")
    assert e.value.code == 400


async def test_selectors_on_list(client) -> None:
    await client.create(CONFIGMAPS, cm("a", labels={"tier": "db", "env": "prod"}))
    await client.create(CONFIGMAPS, cm("b", labels={"tier": "web"}))
    names = lambda r: [i["metadata"]["name"] for i in r["items"]]  # noqa: E731
    assert names(await client.list(CONFIGMAPS, "default", label_selector="tier in (db,cache),env")) == ["a"]
    assert names(await client.list(CONFIGMAPS, "default", label_selector="!env")) == ["b"]
    assert names(await client.list(CONFIGMAPS, "default", field_selector="metadata.name!=a")) == ["b"]
    with pytest.raises(errors.StatusError) as e:
        await client.list(CONFIGMAPS, "default", field_selector="spec.bogus=1")
    assert e.value.code == 400 and "field label not supported" in e.value.message
    with pytest.raises(errors.StatusError) as e:
        await client.list(CONFIGMAPS, "default", label_selector="a in (")
    assert e.value.code == 400


async def test_pod_field_selectors(client) -> None:
    await client.create(PODS, pod("p1", node="n1"))
    await client.create(PODS, pod("p2"))
    r = await client.list(PODS, "", field_selector="spec.nodeName=n1")
    assert [i["metadata"]["name"] for i in r["items"]] == ["p1"]


async def test_watch_resume_and_initial_events(client) -> None:
    await client.create(CONFIGMAPS, cm("a"))
    lst = await client.list(CONFIGMAPS, "default")
    rv = lst["metadata"]["resourceVersion"]
    await client.create(CONFIGMAPS, cm("b"))
    seen = []
    async for ev in client.watch(CONFIGMAPS, "default", resource_version=rv, timeout_seconds=5):
        seen.append((ev.type, ev.object["metadata"]["name"]))
        if len(seen) == 1:
            await client.delete(CONFIGMAPS, "a", "default")
        if len(seen) == 2:
            break
    assert seen == [("ADDED", "b"), ("DELETED", "a")]
    seen = []
    async for ev in client.watch(
        CONFIGMAPS, "default", allow_bookmarks=True, send_initial_events=True, timeout_seconds=5
    ):
        seen.append((ev.type, ev.object["metadata"].get("name"), ev.object["metadata"].get("annotations")))
        if ev.type == "BOOKMARK":
            break
    assert seen == [("ADDED", "b", None), ("BOOKMARK", None, {"k8s.io/initial-events-end": "true"})]


async def test_watch_too_old_gives_410_error_event(cp, client) -> None:
    cp.api.store.resource(("", "configmaps")).history_size = 1
    await client.create(CONFIGMAPS, cm("a"))
    await client.create(CONFIGMAPS, cm("b"))
    await client.create(CONFIGMAPS, cm("c"))
    events = [ev async for ev in client.watch(CONFIGMAPS, "default", resource_version="1", timeout_seconds=2)]
    assert len(events) == 1 and events[0].type == "ERROR"
    assert events[0].object["code"] == 410 and events[0].object["reason"] == "Expired"


async def test_watch_bookmarks_when_idle(client) -> None:
    lst = await client.list(CONFIGMAPS, "default")
    async for ev in client.watch(
        CONFIGMAPS,
        "default",
        resource_version=lst["metadata"]["resourceVersion"],
        allow_bookmarks=True,
        timeout_seconds=5,
    ):
        assert ev.type == "BOOKMARK"
        assert int(ev.object["metadata"]["resourceVersion"]) >= int(lst["metadata"]["resourceVersion"])
        break


async def test_watch_timeout_ends_stream(client) -> None:
    lst = await client.list(CONFIGMAPS, "default")
    events = [
        ev
        async for ev in client.watch(
            CONFIGMAPS, "default", resource_version=lst["metadata"]["resourceVersion"], timeout_seconds=0.1
        )
    ]
    assert events == []


async def test_admission_resolves_priority_and_rejects_unknown_class(client) -> None:
    p = pod("crit")
    p["spec"]["priorityClassName"] = "system-cluster-critical"
    out = await client.create(PODS, p)
    assert out["spec"]["priority"] == 2000000000
    p = pod("bad")
    p["spec"]["priorityClassName"] = "nope"
    with pytest.raises(errors.StatusError) as e:
        await client.create(PODS, p)
    assert e.value.code == 403 and "no PriorityClass with name nope was found" in e.value.message


async def test_many_concurrent_writers_get_distinct_revisions(client) -> None:
    outs = await asyncio.gather(*(client.create(CONFIGMAPS, cm(f"c{i}")) for i in range(50)))
    rvs = [int(o["metadata"]["resourceVersion"]) for o in outs]
    assert len(set(rvs)) == 50
