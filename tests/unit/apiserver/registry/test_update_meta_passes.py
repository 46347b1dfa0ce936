"""An update's two ObjectMeta passes (``ValidateObjectMetaAccessor`` and its ``Update``) report
what kube's report, though the registry skips the second look at collections the first found valid."""

from __future__ import annotations

import copy

import pytest

from apiserver import errors
from apiserver.client.interface import PODS

pytestmark = pytest.mark.anyio


def _pod(labels: dict[str, str]) -> dict:
    return {
        "metadata": {"name": "p", "labels": labels},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x"}]},
    }


def _causes(e: errors.StatusError) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in e.status()["details"]["causes"]]


async def test_a_bad_label_on_update_is_reported_by_both_passes_as_kube_does(client) -> None:
    live = await client.create(PODS, _pod({"a": "b"}), "default")
    body = copy.deepcopy(live)
    body["metadata"]["labels"] = {"bad key!": "v", "ok": "x" * 64}
    with pytest.raises(errors.StatusError) as e:
        await client.update(PODS, body, "default")
    assert e.value.code == 422
    causes = _causes(e.value)
    assert [f for f, _ in causes] == ["metadata.labels"] * 4
    assert causes[:2] == causes[2:]  # the create pass, then the update pass, as kube lists them


async def test_an_update_only_error_is_still_found_when_the_first_pass_is_clean(client) -> None:
    body = _pod({"a": "b"})
    body["metadata"]["finalizers"] = ["example.com/hold"]
    live = await client.create(PODS, body, "default")
    await client.delete(PODS, "p", "default")  # held by the finalizer: marked, not removed
    live = await client.get(PODS, "p", "default")
    assert live["metadata"].get("deletionTimestamp")
    live["metadata"]["finalizers"] = ["example.com/hold", "example.com/new"]
    with pytest.raises(errors.StatusError) as e:
        await client.update(PODS, live, "default")
    assert e.value.code == 422
    assert [f for f, _ in _causes(e.value)] == ["metadata.finalizers"]
    assert "no new finalizers can be added if the object is being deleted" in _causes(e.value)[0][1]
    live["metadata"]["finalizers"] = []
    await client.update(PODS, live, "default")  # and a valid update still goes through
