"""A ``/status`` merge patch merged into a base that shares the live object's sections
(``registry.handoff.private_patch_base``) answers, stores and refuses exactly what the merge
into a private decoding of the whole stored object does, and never modifies the live object.

The same random sequences of status patches (the scheduler's PodGroup condition, pods' held
reports, a StatefulSet's status; JSON merge and strategic merge; patches naming ``spec``,
``metadata`` values, preconditions, directives, nulls and wrong types) run on two fresh API
servers: once as served, once with the shared base switched off. Every answer, error and stored
byte must be the same. After every write on the first server, the live object the patch was
based on must be as it was: the same content and every container the same object. Both also
run with a mutating admission hook that changes the written object's metadata in place, which
must get private values (the status reset's and ``managedFields``).
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.admission import UPDATE, Attributes, Lookup, Plugin
from apiserver.meta import FakeClock
from apiserver.registry import generic
from apiserver.registry.generic import MERGE_PATCH, STRATEGIC_PATCH, WriteOptions
from apiserver.registry.handoff import private_patch_base, private_update_body
from apiserver.server.instance import build_api
from controllers.testing import statefulset
from tests.unit.apiserver.server.test_update_handoff import _containers

from .test_update_path_fastpaths import _Log

NS = "default"
JSON_PATCH = "application/json-patch+json"


def _snapshot(v: Any) -> tuple[bytes, list[int]]:
    return orjson.dumps(v), _containers(v, [])


class _Scribbler(Plugin):
    """A mutating hook that changes a status write's metadata in place: a label, an annotation,
    the first managedFields entry's manager (the tracker replaces the entries of a status write:
    only the live object would show the change, were it handed over)."""

    name = "Scribbler"

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        if attrs.operation != UPDATE or attrs.subresource != "status" or attrs.obj is None:
            return
        md = attrs.obj["metadata"]
        for k in ("labels", "annotations"):
            if type(md.get(k)) is dict:
                md[k]["scribbled"] = "yes"
        entries = md.get("managedFields")
        if type(entries) is list and entries and type(entries[0]) is dict:
            entries[0]["manager"] = "scribbled"


def _owners(rnd: random.Random) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": f"u-{rnd.randint(0, 3)}"}
        | ({"controller": True} if j == 0 else {})
        for j in range(rnd.randint(1, 2))
    ]


def _pod_group(rnd: random.Random, name: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "ownerReferences": _owners(rnd)}
    if rnd.random() < 0.7:
        md["annotations"] = {"scheduling.k8s.io/managed-by": "statefulset-controller"}
    if rnd.random() < 0.5:
        md["finalizers"] = ["scheduling.k8s.io/podgroup-protection"]
    if rnd.random() < 0.3:
        md["labels"] = {"app": "a"}
    group: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": md,
        "spec": {
            "workloadRef": {"workloadName": "w", "templateName": "t"},
            "schedulingPolicy": rnd.choice([{"gang": {"minCount": 3}}, {"basic": {}}]),
        },
    }
    return group


def _pod(rnd: random.Random, name: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": {"app": "a"}}
    if rnd.random() < 0.5:
        md["ownerReferences"] = _owners(rnd)
    if rnd.random() < 0.3:
        md["finalizers"] = ["example.com/f"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": md,
        "spec": {"containers": [{"name": "c", "image": "pause"}], "schedulerName": "default-scheduler"},
    }


def _statefulset(rnd: random.Random, name: str) -> dict[str, Any]:
    sts = statefulset(name, namespace=NS)
    sts["metadata"]["labels"] = {"app": name}
    if rnd.random() < 0.5:
        sts["metadata"]["annotations"] = {"a": "1"}
    return sts


def _condition(rnd: random.Random, types: list[str]) -> dict[str, Any]:
    cond: dict[str, Any] = {
        "type": rnd.choice([*types, 7]) if rnd.random() < 0.1 else rnd.choice(types),
        "status": 1 if rnd.random() < 0.03 else rnd.choice(["True", "False"]),
        "reason": rnd.choice(["Scheduled", "Unschedulable", ""]),
        "message": rnd.choice(["", "m"]),
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    if rnd.random() < 0.5:
        cond["observedGeneration"] = rnd.choice([1, 2, -1])
    if rnd.random() < 0.05:
        cond["$patch"] = rnd.choice(["delete", "replace"])
    return cond


def _status(rnd: random.Random, kind: str) -> Any:
    if rnd.random() < 0.04:
        return rnd.choice([None, "x", []])
    if kind == "StatefulSet":
        n = rnd.choice([0, 1, 3, 3, 3, 3, -1, "3"])
        avail = 5 if rnd.random() < 0.1 else 0
        return {"observedGeneration": 1, "replicas": n, "availableReplicas": avail, "collisionCount": 0}
    types = (
        ["PodGroupInitiallyScheduled", "PodGroupScheduled"]
        if kind == "PodGroup"
        else ["PodScheduled", "Ready"]
    )
    status: dict[str, Any] = {"conditions": [_condition(rnd, types) for _ in range(rnd.randint(1, 2))]}
    if kind == "Pod" and rnd.random() < 0.3:
        status["nominatedNodeName"] = rnd.choice([None, "n1", "Bad_Name"])
    return status


def _metadata(rnd: random.Random, live: dict[str, Any]) -> Any:
    """What a status patch may say of ``metadata`` (a status write resets or ignores most)."""
    md = live["metadata"]
    choice = rnd.randrange(14)
    if choice == 0:
        return {"resourceVersion": md["resourceVersion"]}
    if choice == 1:
        return {"resourceVersion": "1"}  # stale: a conflict
    if choice == 2:
        return {"labels": {"new": "x"}, "annotations": None}
    if choice == 3:
        return {
            "managedFields": rnd.choice(
                [[], [{"manager": 5}], "x", [{"manager": "m", "operation": "Update"}]]
            )
        }
    if choice == 4:
        return {"uid": rnd.choice([md.get("uid"), "other"])}
    if choice == 5:
        return {"name": "other"}
    if choice == 6:
        return {"finalizers": ["x/y"], "$setElementOrder/finalizers": ["x/y"]}
    if choice == 7:
        return {"$deleteFromPrimitiveList/finalizers": ["example.com/f"]}
    if choice == 8:
        return rnd.choice([None, "x", 3])
    if choice == 9:
        return {"ownerReferences": None}
    if choice == 10:
        return {"generation": rnd.choice([5, "5"])}
    if choice == 11:
        return {"labels": {"bad key!": "x"}}
    if choice == 12:
        return {"$patch": "replace", "name": md["name"]}
    return {"creationTimestamp": None}


def _patch(rnd: random.Random, live: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    if rnd.random() < 0.9:
        patch["status"] = _status(rnd, live["kind"])
    if rnd.random() < 0.25:
        patch["metadata"] = _metadata(rnd, live)
    if rnd.random() < 0.1:
        patch["spec"] = rnd.choice([None, {"replicas": 9}, {"schedulingPolicy": None}, "x"])
    if rnd.random() < 0.05:
        patch[rnd.choice(["$patch", "$retainKeys", "apiVersion", "kind", "extra"])] = rnd.choice(
            ["replace", ["status"], "v9", "Other", {"a": 1}]
        )
    return patch


class _Writer:
    def __init__(self, shared_base: bool, hook: bool, monkeypatch: pytest.MonkeyPatch) -> None:
        self.shared_base = shared_base
        self.monkeypatch = monkeypatch
        self.api = build_api(clock=FakeClock())
        if hook:
            self.api.admission.append(_Scribbler())
        self.log = _Log()
        self.checked = 0
        self.shared = 0

    def write(self, rd: Any, name: str, patch: Any, patch_type: str, manager: str) -> None:
        api = self.api
        api.clock.step(1)
        rec = api.store.get(api._skey(rd), api._key(rd, NS, name))
        live = rec.shared()  # the revision as the informers hold it
        before = _snapshot(live)
        if self.shared_base and private_patch_base(rd, live, patch, "status") is not None:
            self.shared += 1
        with self.monkeypatch.context() as m:
            if not self.shared_base:
                m.setattr(generic, "private_patch_base", lambda *_: None)
            try:
                res = api.patch(
                    rd, NS, name, patch, patch_type, WriteOptions(field_manager=manager), "status"
                )
            except errors.StatusError as e:
                self.log.append(("error", e.code, e.message, orjson.dumps(e.status().get("details"))))
            else:
                self.log.append(("ok", res.code, self.log.normal(res.obj), res.warnings))
        assert _snapshot(live) == before, "the write modified the live object"
        assert orjson.loads(rec.raw) == live
        self.checked += 1
        new = api.store.get(api._skey(rd), api._key(rd, NS, name))
        new.shared()
        self.log.append(("stored", self.log.normal(orjson.loads(new.raw)), self.log.rv(new.rv)))


def _run(seed: int, shared_base: bool, hook: bool, monkeypatch: pytest.MonkeyPatch) -> _Writer:
    w = _Writer(shared_base, hook, monkeypatch)
    api = w.api
    uids = iter(range(10**6))
    api.new_uid = lambda: f"uid-{next(uids)}"
    rnd = random.Random(seed)
    kinds = (
        (api.registry.get("scheduling.k8s.io", "v1beta1", "podgroups"), _pod_group, "statefulset-controller"),
        (api.registry.get("", "v1", "pods"), _pod, "ctl"),
        (api.registry.get("apps", "v1", "statefulsets"), _statefulset, "bench"),
    )
    for i in range(60):
        rd, make, creator = kinds[i % 3]
        name = f"o{i}"
        api.clock.step(1)
        api.create(rd, NS, make(rnd, name), WriteOptions(field_manager=creator))
        for _ in range(rnd.randint(1, 3)):
            live = api.store.get(api._skey(rd), api._key(rd, NS, name)).shared()
            patch = _patch(rnd, live)
            kind = rnd.random()
            if kind < 0.45 and rd.strategic_merge:
                patch_type = STRATEGIC_PATCH
            elif kind < 0.95:
                patch_type = MERGE_PATCH
            else:
                patch_type = JSON_PATCH
                patch = [{"op": "replace", "path": "/status", "value": patch.get("status") or {}}]
            manager = rnd.choice(["kube-scheduler", "kube-scheduler", "kubelet"])
            w.write(rd, name, orjson.loads(orjson.dumps(patch)), patch_type, manager)
    return w


@pytest.mark.parametrize("hook", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_status_patches_on_the_live_base_answer_and_store_as_on_a_decoded_copy(
    seed: int, hook: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _run(seed, True, hook, monkeypatch)
    general = _run(seed, False, hook, monkeypatch)
    assert len(fast.log) == len(general.log)
    for a, b in zip(fast.log, general.log, strict=True):
        assert a == b
    # not vacuous: the shared base taken, writes stored and refused, the live object checked
    assert fast.shared > 80
    assert sum(1 for e in fast.log if e[0] == "ok") > 60
    assert {e[1] for e in fast.log if e[0] == "error"} >= {400, 409, 422}
    assert fast.checked > 100


def _group_api() -> tuple[Any, Any, dict[str, Any]]:
    api = build_api(clock=FakeClock())
    rd = api.registry.get("scheduling.k8s.io", "v1beta1", "podgroups")
    api.create(rd, NS, _pod_group(random.Random(1), "g"), WriteOptions(field_manager="ctl"))
    live = api.store.get(api._skey(rd), api._key(rd, NS, "g")).shared()
    return api, rd, live


def test_the_base_shares_what_the_patch_does_not_name_and_copies_the_rest() -> None:
    _api, rd, live = _group_api()
    base = private_patch_base(rd, live, {"status": {"conditions": []}}, "status")
    assert base is not None and base == live
    assert base is not live and base["metadata"] is not live["metadata"]
    assert base["spec"] is live["spec"]
    md, live_md = base["metadata"], live["metadata"]
    assert all(md[k] is live_md[k] for k in live_md)
    # a section or a metadata value the patch names is a private copy
    base = private_patch_base(rd, live, {"spec": {"priority": 1}, "metadata": {"annotations": {}}}, "status")
    assert base is not None and base == live
    assert base["spec"] is not live["spec"]
    assert base["metadata"]["annotations"] is not live_md["annotations"]
    assert base["metadata"]["ownerReferences"] is live_md["ownerReferences"]


@pytest.mark.parametrize(
    ("patch", "subresource"),
    [
        ({"status": {}}, ""),  # not a status write
        ({"$patch": "replace", "status": {}}, "status"),  # a directive may change what it does not name
        ({"$retainKeys": ["status"]}, "status"),
        ({"metadata": None, "status": {}}, "status"),
        ({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f"]}}, "status"),
        ([{"op": "add", "path": "/status", "value": {}}], "status"),
    ],
)
def test_the_base_is_a_whole_decoding_where_the_patch_could_reach_further(
    patch: Any, subresource: str
) -> None:
    _api, rd, live = _group_api()
    assert private_patch_base(rd, live, patch, subresource) is None


def test_a_mutating_hook_never_changes_the_live_object_of_a_status_update() -> None:
    """An update's body built around the live object (the StatefulSet controller's status write):
    its ``managedFields`` are passed through by the in-process client; the registry gives a
    mutating hook a private copy."""
    api, rd, live = _group_api()
    api.admission.append(_Scribbler())
    before = _snapshot(live)
    body = private_update_body(rd, {**live, "status": {"conditions": []}}, live, "status")
    assert body["metadata"]["managedFields"] is live["metadata"]["managedFields"]
    res = api.update(rd, NS, "g", body, WriteOptions(field_manager="kube-scheduler"), "status")
    assert _snapshot(live) == before
    assert res.obj["metadata"]["annotations"]["scribbled"] == "yes"
