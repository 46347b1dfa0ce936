"""The ResourceClaim controller alone (no scheduler): generation, status, reservations, deallocation."""

from __future__ import annotations

import copy
import random

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, PODGROUPS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, Client
from controllers.manager import RESOURCE_CLAIM, register_controllers
from controllers.resourceclaim.controller import ResourceClaimController
from gangplane.controlplane import ControlPlane
from resourceclaims.claims import DELETE_PROTECTION_FINALIZER, POD_CLAIM_NAME_ANNOTATION
from tests.helpers import wait_for_list, wait_for_object

pytestmark = pytest.mark.anyio
NS = "default"


def template(name: str = "tpl") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "metadata": {"labels": {"team": "ml"}},
            "spec": {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": "c"}}]}},
        },
    }


def pod(name: str, *entries: Obj, group: str = "") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "x"}], "resourceClaims": list(entries)}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


async def start(cp: ControlPlane) -> ResourceClaimController:
    register_controllers(cp, RESOURCE_CLAIM)
    ctrl = await cp.start_component(RESOURCE_CLAIM)
    assert isinstance(ctrl, ResourceClaimController) and ctrl.group_claims
    return ctrl


def statuses(obj: Obj | None) -> list[Obj]:
    return ((obj or {}).get("status") or {}).get("resourceClaimStatuses") or []


async def test_a_pod_template_claim_is_generated_owned_and_recorded(cp: ControlPlane, client) -> None:
    await start(cp)
    await client.create(RESOURCECLAIMTEMPLATES, template(), NS)
    created = await client.create(PODS, pod("web-0", {"name": "gpu", "resourceClaimTemplateName": "tpl"}), NS)
    p = await wait_for_object(client, PODS, "web-0", NS, lambda o: bool(statuses(o)))
    (st,) = statuses(p)
    assert st["name"] == "gpu" and st["resourceClaimName"].startswith("web-0-gpu-")
    claim = await client.get(RESOURCECLAIMS, st["resourceClaimName"], NS)
    assert claim["metadata"]["annotations"] == {POD_CLAIM_NAME_ANNOTATION: "gpu"}
    assert claim["metadata"]["labels"] == {"team": "ml"}
    assert claim["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "web-0",
            "uid": created["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "c"


async def test_a_pod_group_gets_one_claim_and_matching_pods_point_at_it(cp: ControlPlane, client) -> None:
    await start(cp)
    await client.create(RESOURCECLAIMTEMPLATES, template(), NS)
    shared = {"name": "shared", "resourceClaimTemplateName": "tpl"}
    other = {"name": "own", "resourceClaimTemplateName": "tpl"}
    await client.create(
        PODGROUPS,
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": NS},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "resourceClaims": [shared]},
        },
        NS,
    )
    for i in range(3):
        await client.create(PODS, pod(f"m-{i}", dict(shared), dict(other), group="g"), NS)
    pg = await wait_for_object(client, PODGROUPS, "g", NS, lambda o: bool(statuses(o)))
    (gst,) = statuses(pg)
    assert gst["resourceClaimName"].startswith("g-shared-")
    pods = await wait_for_list(
        client, PODS, NS, lambda items: len(items) == 3 and all(len(statuses(p)) == 2 for p in items)
    )
    for p in pods:
        st = {s["name"]: s["resourceClaimName"] for s in statuses(p)}
        assert st["shared"] == gst["resourceClaimName"]
        assert st["own"].startswith(f"{p['metadata']['name']}-own-")
    claims = (await client.list(RESOURCECLAIMS, NS))["items"]
    assert len(claims) == 4  # one for the group, one pod-scoped claim per pod


async def test_gone_consumers_are_unreserved_then_the_claim_is_deallocated(cp: ControlPlane, client) -> None:
    ctrl = await start(cp)
    claim = await client.create(
        RESOURCECLAIMS,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "pool", "namespace": NS, "finalizers": [DELETE_PROTECTION_FINALIZER]},
            "spec": {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": "c"}}]}},
        },
        NS,
    )
    alive = await client.create(PODS, pod("alive", {"name": "d", "resourceClaimName": "pool"}), NS)
    body = copy.deepcopy(claim)
    body["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "device", "driver": "d.example.com", "pool": "p", "device": "x"}]
            }
        },
        "reservedFor": [
            {"resource": "pods", "name": "alive", "uid": alive["metadata"]["uid"]},
            {"resource": "pods", "name": "gone", "uid": "00000000-0000-0000-0000-000000000001"},
        ],
    }
    await client.update_status(RESOURCECLAIMS, body, NS)
    got = await wait_for_object(
        client,
        RESOURCECLAIMS,
        "pool",
        NS,
        lambda o: o is not None and len(o["status"].get("reservedFor", [])) == 1,
    )
    assert got is not None and got["status"]["allocation"] is not None
    await client.delete(PODS, "alive", NS, grace_period_seconds=0)
    got = await wait_for_object(
        client,
        RESOURCECLAIMS,
        "pool",
        NS,
        lambda o: (
            o is not None
            and not o.get("status")
            and DELETE_PROTECTION_FINALIZER not in (o["metadata"].get("finalizers") or [])
        ),
    )
    assert got is not None  # deallocated, never deleted: it was referenced by name
    await ctrl.wait_idle()
    assert (await client.get(RESOURCECLAIMS, "pool", NS))["metadata"]["name"] == "pool"


async def test_a_done_pods_generated_claim_is_deleted(cp: ControlPlane, client) -> None:
    await start(cp)
    await client.create(RESOURCECLAIMTEMPLATES, template(), NS)
    await client.create(PODS, pod("job-0", {"name": "gpu", "resourceClaimTemplateName": "tpl"}), NS)
    p = await wait_for_object(client, PODS, "job-0", NS, lambda o: bool(statuses(o)))
    name = statuses(p)[0]["resourceClaimName"]
    p["status"]["phase"] = "Succeeded"
    await client.update_status(PODS, p, NS)
    assert await wait_for_object(client, RESOURCECLAIMS, name, NS, lambda o: o is None) is None


async def test_a_missing_template_is_retried_until_it_exists(cp: ControlPlane, client) -> None:
    await start(cp)
    await client.create(PODS, pod("web-0", {"name": "gpu", "resourceClaimTemplateName": "late"}), NS)
    await client.create(RESOURCECLAIMTEMPLATES, template("late"), NS)
    p = await wait_for_object(client, PODS, "web-0", NS, lambda o: bool(statuses(o)), timeout=15)
    assert statuses(p)[0]["resourceClaimName"].startswith("web-0-gpu-")


# ---------------------------------------------------------------- claims created, not yet delivered
# The controller's informers are never started here: each test hands them the apiserver's state
# by a list (what a re-list delivers) exactly when it wants, so a sync can run twice before the
# claim informer has seen the claim the first one created — as a lagging watch would have it.


def unstarted(client: Client) -> ResourceClaimController:
    return ResourceClaimController(client, group_claims=True)


async def deliver(ctrl: ResourceClaimController, *gvrs: GVR) -> None:
    """The apiserver's current state of ``gvrs`` reaches the controller's informers (a re-list)."""
    for inf in ctrl.informers.informers():
        if inf.gvr in gvrs:
            await inf._list()


def group(name: str = "g") -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "tpl"}],
        },
    }


async def claim_names(client: Client) -> list[str]:
    return sorted(c["metadata"]["name"] for c in (await client.list(RESOURCECLAIMS, NS))["items"])


async def group_synced_once(client: Client) -> tuple[ResourceClaimController, str]:
    """An unstarted controller that has synced PodGroup ``g`` once, and the one claim it created."""
    ctrl = unstarted(client)
    await client.create(RESOURCECLAIMTEMPLATES, template(), NS)
    await client.create(PODGROUPS, group(), NS)
    await deliver(ctrl, PODS, PODGROUPS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES)
    await ctrl.sync(("podgroup", f"{NS}/g"))
    (name,) = await claim_names(client)
    return ctrl, name


async def test_a_group_synced_again_before_its_claim_is_delivered_gets_no_second_claim(client) -> None:
    ctrl, name = await group_synced_once(client)
    await ctrl.sync(("podgroup", f"{NS}/g"))  # the claim informer has not delivered it
    assert await claim_names(client) == [name]
    await deliver(ctrl, RESOURCECLAIMS, PODGROUPS)
    await ctrl.sync(("podgroup", f"{NS}/g"))  # now found in the informer, the remembered one superseded
    assert await claim_names(client) == [name]
    assert not ctrl._created
    pg = await client.get(PODGROUPS, "g", NS)
    assert statuses(pg) == [{"name": "shared", "resourceClaimName": name}]


async def test_a_pod_synced_again_before_its_claim_is_delivered_gets_no_second_claim(client) -> None:
    ctrl = unstarted(client)
    await client.create(RESOURCECLAIMTEMPLATES, template(), NS)
    await client.create(PODS, pod("web-0", {"name": "gpu", "resourceClaimTemplateName": "tpl"}), NS)
    await deliver(ctrl, PODS, PODGROUPS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES)
    await ctrl.sync(("pod", f"{NS}/web-0"))
    (name,) = await claim_names(client)
    # neither the claim nor the pod's new status delivered: the status cannot point at the claim
    await ctrl.sync(("pod", f"{NS}/web-0"))
    assert await claim_names(client) == [name]
    p = await client.get(PODS, "web-0", NS)
    assert statuses(p) == [{"name": "gpu", "resourceClaimName": name}]


async def test_a_claim_deleted_before_it_was_delivered_is_generated_again(client) -> None:
    ctrl, first = await group_synced_once(client)
    await client.delete(RESOURCECLAIMS, first, NS)
    # the re-list never shows the claim, yet its resourceVersion is past the claim's: it is gone
    await deliver(ctrl, RESOURCECLAIMS)
    await ctrl.sync(("podgroup", f"{NS}/g"))
    (second,) = await claim_names(client)
    assert second != first
    assert list(ctrl._created) == [f"{NS}/{second}"]  # the deleted one is not remembered


@pytest.mark.parametrize("seed", range(12))
async def test_syncs_deliveries_and_deletes_in_any_order_never_leave_two_claims_for_one_entry(
    client: Client, seed: int
) -> None:
    rnd = random.Random(seed)
    ctrl = unstarted(client)
    await client.create(RESOURCECLAIMTEMPLATES, template(), NS)
    await client.create(PODGROUPS, group(), NS)
    await client.create(PODS, pod("web-0", {"name": "gpu", "resourceClaimTemplateName": "tpl"}), NS)
    everything = (PODS, PODGROUPS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES)
    await deliver(ctrl, *everything)

    async def live() -> list[Obj]:
        return (await client.list(RESOURCECLAIMS, NS))["items"]

    for _ in range(30):
        op = rnd.randrange(6)
        if op == 0:
            await ctrl.sync(("pod", f"{NS}/web-0"))
        elif op == 1:
            await ctrl.sync(("podgroup", f"{NS}/g"))
        elif op in (2, 3):
            await deliver(ctrl, RESOURCECLAIMS if op == 2 else rnd.choice((PODS, PODGROUPS)))
        elif claims := await live():
            await client.delete(RESOURCECLAIMS, rnd.choice(claims)["metadata"]["name"], NS)
        owners = [c["metadata"]["ownerReferences"][0]["uid"] for c in await live()]
        assert len(owners) == len(set(owners)), owners  # one claim per owner (each has one entry)
    for _ in range(2):  # caught up: every entry has its claim, recorded in the owner's status
        await deliver(ctrl, *everything)
        await ctrl.sync(("podgroup", f"{NS}/g"))
        await ctrl.sync(("pod", f"{NS}/web-0"))
    by_owner = {c["metadata"]["ownerReferences"][0]["name"]: c["metadata"]["name"] for c in await live()}
    assert len(await live()) == 2
    assert statuses(await client.get(PODGROUPS, "g", NS)) == [
        {"name": "shared", "resourceClaimName": by_owner["g"]}
    ]
    assert statuses(await client.get(PODS, "web-0", NS)) == [
        {"name": "gpu", "resourceClaimName": by_owner["web-0"]}
    ]
