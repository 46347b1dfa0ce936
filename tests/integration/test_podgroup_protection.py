"""KEP-5832 deletion protection: the PodGroup finalizer stays until every referencing pod is terminal.

Admission adds ``scheduling.k8s.io/podgroup-protection`` to new PodGroups and refuses pods naming a
group that is being deleted; the protection controller removes the finalizer once no pod that
references the group is non-terminal.
"""

from __future__ import annotations

import pytest

from apiserver import errors
from apiserver.client.interface import PODGROUPS, PODS
from controllers.podgroupprotection import NAME, new_podgroup_protection_controller
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio
FIN = "scheduling.k8s.io/podgroup-protection"


def podgroup(name: str) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}},
    }


def pod(name: str, group: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulingGroup": {"podGroupName": group},
            "containers": [{"name": "c", "image": "busybox"}],
        },
    }


async def test_finalizer_added_at_admission_and_held_while_pods_run(cp, client) -> None:
    cp.register(NAME, new_podgroup_protection_controller)
    await cp.start_component(NAME)
    pg = await client.create(PODGROUPS, podgroup("g"))
    assert pg["metadata"]["finalizers"] == [FIN]
    assert pg["spec"]["disruptionMode"] == {"single": {}}
    await client.create(PODS, pod("p", "g"))
    await client.patch(PODS, "p", {"status": {"phase": "Running"}}, "default", subresource="status")
    await client.delete(PODGROUPS, "g", "default")
    held = await client.get(PODGROUPS, "g", "default")
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == [FIN]
    # A new pod may not join a group that is being deleted.
    with pytest.raises(errors.StatusError) as e:
        await client.create(PODS, pod("late", "g"))
    assert e.value.code == 403
    assert 'cannot create Pod referencing PodGroup "g" because it is being deleted' in e.value.message
    # Once the last referencing pod is terminal, the controller lets the group go.
    await client.patch(PODS, "p", {"status": {"phase": "Succeeded"}}, "default", subresource="status")
    assert await wait_for_object(client, PODGROUPS, "g", "default", cond=lambda o: o is None) is None


async def test_unreferenced_group_is_released_at_once(cp, client) -> None:
    cp.register(NAME, new_podgroup_protection_controller)
    await cp.start_component(NAME)
    await client.create(PODGROUPS, podgroup("idle"))
    await client.delete(PODGROUPS, "idle", "default")
    assert await wait_for_object(client, PODGROUPS, "idle", "default", cond=lambda o: o is None) is None


async def test_finalizer_restored_on_live_group_in_use(cp, client) -> None:
    cp.register(NAME, new_podgroup_protection_controller)
    await cp.start_component(NAME)
    await client.create(PODGROUPS, podgroup("g2"))
    await client.create(PODS, pod("q", "g2"))
    await client.patch(PODGROUPS, "g2", {"metadata": {"finalizers": None}}, "default")
    got = await wait_for_object(
        client,
        PODGROUPS,
        "g2",
        "default",
        cond=lambda o: o is not None and FIN in (o["metadata"].get("finalizers") or []),
    )
    assert got is not None
