"""Issue 9 acceptance: "An invalid CEL selector is rejected with the field path; a selector that
matches no device leaves the group Pending with a message naming the request" — and, with it,
KEP-6277's "Failure scenario: ... no pod of the group is bound" for devices: a gang whose claim
cannot be allocated binds nothing.
"""

from __future__ import annotations

import pytest

from apiserver import errors
from apiserver.client.interface import PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, STATEFULSETS
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.dra_support import (
    GPU_CLASS,
    NS,
    claim_template,
    only_pod_group,
    shared_sts,
    start_dra_stack,
)
from tests.integration.podgroup_support import scheduled_condition, wait_pod_group
from tests.integration.scheduler_support import wait_event, wait_unschedulable

pytestmark = pytest.mark.anyio


async def test_an_invalid_selector_is_a_422_naming_the_field(cp: ControlPlane, client) -> None:
    body = claim_template(
        selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].model =='}}]
    )
    with pytest.raises(errors.StatusError) as e:
        await client.create(RESOURCECLAIMTEMPLATES, body, NS)
    assert e.value.code == 422
    (cause,) = e.value.details["causes"]
    assert cause["field"] == "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert cause["reason"] == "FieldValueInvalid"
    assert "compilation failed: ERROR: <input>:1:46: Syntax error" in cause["message"]


async def test_a_selector_matching_no_device_leaves_the_gang_pending_naming_the_request(
    cp: ControlPlane, client
) -> None:
    await start_dra_stack(cp)
    tpl = claim_template(
        "b200",
        GPU_CLASS,
        selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "b200"'}}],
    )
    await client.create(RESOURCECLAIMTEMPLATES, tpl, NS)
    await client.create(STATEFULSETS, shared_sts("train", 3, template="b200"), NS)
    pg = await wait_pod_group(client, (await only_pod_group(client))["metadata"]["name"], "False", timeout=20)
    cond = scheduled_condition(pg)
    assert cond is not None and cond["reason"] == "Unschedulable"
    pods = await wait_for_list(client, PODS, NS, lambda items: len(items) == 3, label_selector="app=train")
    assert all(not p["spec"].get("nodeName") for p in pods)
    p = await wait_unschedulable(client, "train-0", timeout=20)
    msg = next(c["message"] for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
    (claim,) = (await client.list(RESOURCECLAIMS, NS))["items"]
    assert (
        f'cannot allocate all claims: claim "{claim["metadata"]["name"]}", request "device": no device of class '
        '"gpu.example.com" matching the selectors is reachable from the node'
    ) in msg
    assert "allocation" not in claim.get("status", {})
    ev = await wait_event(client, pg["metadata"]["name"], "GangUnschedulable")
    assert 'request "device"' in ev["message"]
