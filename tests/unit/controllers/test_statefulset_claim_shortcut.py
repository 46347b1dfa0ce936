"""The pod steps skip their claim calls for a set without claim templates
(``StatefulSetControl.claim_shortcut``) and still do exactly what the general path does.

Differential: two :class:`StatefulSetControl` over the real :class:`StatefulPodControl` — one with
the shortcut, one making every claim call — sync the same random sets (with and without claim
templates, both retention policies, both management policies) over the same random pods
(missing, Pending, Running, Ready or not, Failed, Succeeded, terminating, with a broken identity
or storage, claims present, missing or owned by an old pod). Every API call, with its body, and
every Event must be the same, in the same order.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import CONTROLLERREVISIONS
from apiserver.meta import FakeClock
from controllers.statefulset import utils
from controllers.statefulset.control import StatefulSetControl
from controllers.statefulset.pod_control import StatefulPodControl
from controllers.testing import statefulset

pytestmark = pytest.mark.anyio

NS = "default"


class RecordingClient:
    """Answers every write (a created object gets a uid) and logs it with its body."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log
        self.rv = 100

    def _answer(self, body: Obj) -> Obj:
        self.rv += 1
        out = copy.deepcopy(body)
        md = out.setdefault("metadata", {})
        md.setdefault("uid", f"uid-{md.get('name', '')}-{self.rv}")
        md["resourceVersion"] = str(self.rv)
        return out

    async def create(self, gvr: Any, body: Obj, namespace: str = "", **_: Any) -> Obj:
        self.log.append(("create", gvr.resource, copy.deepcopy(body)))
        return self._answer(body)

    async def update(self, gvr: Any, body: Obj, namespace: str = "", **_: Any) -> Obj:
        self.log.append(("update", gvr.resource, copy.deepcopy(body)))
        return self._answer(body)

    async def update_status(self, gvr: Any, body: Obj, namespace: str = "", **_: Any) -> Obj:
        self.log.append(("status", gvr.resource, copy.deepcopy(body["status"])))
        return self._answer(body)

    async def patch(self, gvr: Any, name: str, patch: Obj, namespace: str = "", **_: Any) -> Obj:
        self.log.append(("patch", gvr.resource, name, copy.deepcopy(patch)))
        return {"metadata": {"name": name}}

    async def delete(self, gvr: Any, name: str, namespace: str = "", **kw: Any) -> None:
        self.log.append(("delete", gvr.resource, name, kw))

    async def get(self, gvr: Any, name: str, namespace: str = "") -> Obj:
        raise errors.StatusError(404, "NotFound", name)


class Claims:
    """The claim informer: get by name."""

    def __init__(self, claims: dict[str, Obj]) -> None:
        self.claims = claims

    def get_by_name(self, namespace: str, name: str) -> Obj | None:
        return self.claims.get(name)


class Recorder:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def event(self, obj: Obj, etype: str, reason: str, message: str, related: Obj | None = None) -> None:
        self.log.append(("event", etype, reason, message))


def _set(rnd: random.Random) -> Obj:
    claims = rnd.choice([(), (), ("data",), ("data", "logs")])
    retention = rnd.choice([None, ("Retain", "Retain"), ("Delete", "Delete"), ("Retain", "Delete")])
    sts = statefulset(
        "web",
        rnd.randint(1, 6),
        policy=rnd.choice(["Parallel", "OrderedReady"]),
        claims=claims,
        retention=retention,
    )
    sts["metadata"].update(uid="set-uid", generation=1, resourceVersion="10")
    return sts


def _pod(rnd: random.Random, sts: Obj, ordinal: int, revision: str) -> Obj:
    pod = utils.new_pod(sts, sts["spec"]["template"], ordinal)
    md = pod["metadata"]
    md.update(uid=f"uid-web-{ordinal}", resourceVersion=str(ordinal + 1))
    md["labels"][utils.REVISION_LABEL] = revision
    phase = rnd.choice(["Pending", "Running", "Running", "Failed", "Succeeded"])
    ready = phase == "Running" and rnd.random() < 0.7
    pod["status"] = {
        "phase": phase,
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    if rnd.random() < 0.1:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if rnd.random() < 0.2:
        del md["labels"][utils.POD_NAME_LABEL]  # a broken identity: the pod is updated
    if rnd.random() < 0.15:
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "other"}}]
    return pod


def _claims(rnd: random.Random, sts: Obj) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    for tmpl in utils.claim_templates(sts):
        for ordinal in range(utils.replicas_of(sts) + 1):
            if rnd.random() < 0.5:
                continue
            name = utils.claim_name(sts, tmpl["metadata"]["name"], ordinal)
            md: Obj = {"name": name, "namespace": NS, "uid": f"claim-{name}", "resourceVersion": "3"}
            if rnd.random() < 0.3:
                md["ownerReferences"] = [
                    {"apiVersion": "v1", "kind": "Pod", "name": f"web-{ordinal}", "uid": "old"}
                ]
            out[name] = {"metadata": md}
    return out


def random_case(rnd: random.Random, existing: float) -> tuple[Obj, list[Obj], dict[str, Obj]]:
    """A random set, its pods (each ordinal present with probability ``existing``, of the set's
    current revision or an older one, two ordinals past its replicas included) and claims."""
    sts = _set(rnd)
    probe = StatefulSetControl(None, None, None, FakeClock())  # type: ignore[arg-type]
    revision = probe._new_revision(sts, 1, 0)["metadata"]["name"]
    pods = [
        _pod(rnd, sts, o, rnd.choice([revision, "web-old"]))
        for o in range(utils.replicas_of(sts) + 2)
        if rnd.random() < existing
    ]
    return sts, pods, _claims(rnd, sts)


async def _sync(shortcut: bool, sts: Obj, pods: list[Obj], claims: dict[str, Obj]) -> list[Any]:
    log: list[Any] = []
    client, recorder = RecordingClient(log), Recorder(log)
    pod_control = StatefulPodControl(client, recorder, Claims(claims))  # type: ignore[arg-type]
    ctl = StatefulSetControl(client, pod_control, recorder, FakeClock(), claim_shortcut=shortcut)  # type: ignore[arg-type]
    revision = ctl._new_revision(sts, 1, 0)
    revision["metadata"].update(uid="rev-uid", resourceVersion="5")
    status = await ctl.update(copy.deepcopy(sts), copy.deepcopy(pods), [revision])
    log.append(("returned", status))
    log.append(("revision", revision["metadata"]["name"]))
    return [c for c in log if c[:2] != ("create", CONTROLLERREVISIONS.resource)]


@pytest.mark.parametrize("seed", range(6))
async def test_the_claim_shortcut_syncs_exactly_as_the_general_path(seed: int) -> None:
    rnd = random.Random(seed)
    shortcut_taken = 0
    kinds: set[str] = set()
    for _ in range(60):
        sts, pods, claims = random_case(rnd, 0.6)
        fast = await _sync(True, sts, pods, claims)
        general = await _sync(False, sts, pods, claims)
        assert fast == general
        shortcut_taken += not utils.claim_templates(sts)
        kinds.update(c[0] + ":" + str(c[1]) for c in fast)
    assert shortcut_taken > 15  # half the sets here have no claim templates: the shortcut ran
    # the syncs made every kind of call the shortcut could have changed
    assert {
        "create:pods",
        "create:persistentvolumeclaims",
        "update:pods",
        "patch:persistentvolumeclaims",
    } <= kinds
    assert {"delete:pods", "event:Normal", "event:Warning"} <= kinds


async def test_a_set_without_claim_templates_makes_no_claim_call() -> None:
    """The calls the shortcut skips are the ones that would have found nothing to do."""
    sts = statefulset("web", 3, policy="Parallel")
    sts["metadata"].update(uid="set-uid", generation=1, resourceVersion="10")
    log = await _sync(True, sts, [], {})
    assert [c[1] for c in log if c[0] == "create"] == ["pods", "pods", "pods"]
