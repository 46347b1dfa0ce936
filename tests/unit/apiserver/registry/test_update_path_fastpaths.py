"""The update path's fast paths store and answer exactly what the general path does.

The same random sequences of writes (create, status update, merge patches of labels and of
status, a main-resource update) run twice on fresh API servers: once as served, once with the
fast paths of the update path switched off — a decoded ``fieldsV1`` never kept as its set's
encoding, no stored subtree parse remembered, a new set's shared tree decoded from its text
(not built from the encoder's parts), an untouched entry's tree decoded from its text (not the
stored revision's own), StatefulSet and PodGroup status writes defaulted, no comparison of a pair answered from
memory nor an atomic subtree added without its walk, a union always a new set, a manager's
re-written entry a new set too, a create's joined entry parsed whole on its first update (not
from its parts). Every answer
(object, managedFields entries, resourceVersion) and every error (code and message) must be
the same, and so must the stored bytes. After each write the record
is shared as the informers share it, so the next write finds the stored object they leave, and
the servers' clock moves on a second (entries are ordered by their times).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

import apiserver.patch.apply as apply_mod
from apiserver import errors
from apiserver.meta import FakeClock
from apiserver.patch import fieldpath, sharedtrees
from apiserver.registry.generic import WriteOptions
from apiserver.registry.strategies.apps import StatefulSetStrategy
from apiserver.registry.strategies.scheduling import PodGroupStrategy
from apiserver.server.instance import build_api
from apiserver.storage.compact import canonical_json

from ..patch.test_tracker import _mutate, _random_pod

MERGE = "application/merge-patch+json"
SCALARS = ["a", "b", 0, 1, True, None, ""]


class _Log(list[Any]):
    """What a sequence of writes answered and stored, without what differs between two servers
    by design: uids; resourceVersions (the storage's revision counter starts from the wall
    clock) become the order in which they appeared."""

    def __init__(self) -> None:
        super().__init__()
        self.revisions: dict[str, int] = {}

    def rv(self, rv: Any) -> int:
        return self.revisions.setdefault(str(rv), len(self.revisions))

    def normal(self, obj: Any) -> Any:
        out = copy.deepcopy(obj)
        md = out.get("metadata") if isinstance(out, dict) else None
        if isinstance(md, dict):
            md.pop("uid", None)
            if "resourceVersion" in md:
                md["resourceVersion"] = self.rv(md["resourceVersion"])
        return out


def _attempt(log: _Log, api: Any, rd: Any, name: str, write: Any) -> None:
    api.clock.step(1)
    try:
        res = write()
    except errors.StatusError as e:
        log.append(("error", e.code, e.message))
        return
    log.append(("ok", res.code, log.normal(res.obj), res.warnings))
    rec = api.store.get(api._skey(rd), api._key(rd, "default", name))
    if rec is not None:
        rec.shared()  # as the informers of a running plane hold it
        log.append(("stored", log.normal(orjson.loads(rec.raw)), log.rv(rec.rv)))


def _status(rnd: random.Random) -> dict[str, Any]:
    conds = [
        {
            "type": rnd.choice(["Ready", "X"]),
            "status": rnd.choice(["True", "False", 1]),
            "lastProbeTime": None,
        }
        for _ in range(rnd.randint(0, 2))
    ]
    status: dict[str, Any] = {"phase": rnd.choice(["Running", "Pending", 3]), "conditions": conds}
    if rnd.random() < 0.5:
        ip = f"10.0.{rnd.randint(0, 3)}.{rnd.randint(1, 9)}"
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    return status


def _running(rnd: random.Random, status: Any) -> dict[str, Any]:
    """``status`` as the node agent writes it when the pod starts: its conditions kept, four
    added (the same for every pod started within a second), the pod's own IPs and container."""
    old = status if isinstance(status, dict) else {}
    when = rnd.choice(["2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"])
    conds = [c for c in old.get("conditions") or [] if isinstance(c, dict)]
    for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"):
        if rnd.random() < 0.9:
            conds.append({"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": when})
    ip = f"10.0.{rnd.randint(0, 3)}.{rnd.randint(1, 9)}"
    return {
        **old,
        "phase": "Running",
        "conditions": conds,
        "hostIP": "172.16.0.1",
        "hostIPs": [{"ip": "172.16.0.1"}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": when,
        "containerStatuses": [
            {
                "name": "c",
                "containerID": f"containerd://{rnd.randint(0, 10**6):064x}",
                "ready": True,
                "restartCount": rnd.choice([0, "0"]),  # the odd wrong type: refused the same way
                "state": {"running": {"startedAt": when}},
            }
        ],
    }


def _pod_writes(api: Any, rnd: random.Random, i: int, log: _Log) -> None:
    rd = api.registry.get("", "v1", "pods")
    pod = _random_pod(rnd)
    name = f"p{i}"
    pod["metadata"]["name"] = name
    if rnd.random() < 0.2:
        pod = _mutate(rnd, pod)  # mostly refused: the errors must be the same too
        pod["metadata"] = {"name": name}
    elif rnd.random() < 0.8:  # of the right types: stored, then written to
        md = pod["metadata"]
        md["labels"] = {k: str(v) for k, v in (md.get("labels") or {}).items()}
        for c in pod["spec"]["containers"]:
            c["image"] = str(c["image"]) or "img"
            for e in c.get("env") or []:
                e["value"] = str(e["value"])
        pod.pop("unknown", None)
    manager = rnd.choice(["m1", "m2"])
    _attempt(log, api, rd, name, lambda: api.create(rd, "default", pod, WriteOptions(field_manager=manager)))
    for _ in range(4):
        rec = api.store.get(api._skey(rd), api._key(rd, "default", name))
        if rec is None:
            return
        kind = rnd.choice(["status", "running", "status-patch", "label-patch", "update"])
        who = WriteOptions(field_manager=rnd.choice(["m1", "kubelet", "sched"]))
        if kind == "status":
            body = rec.copy()
            body["status"] = _status(rnd)
            if rnd.random() < 0.3:
                body["spec"] = {"containers": [{"name": "other", "image": "y"}]}
            _attempt(
                log, api, rd, name, lambda b=body, w=who: api.update(rd, "default", name, b, w, "status")
            )
        elif kind == "running":
            body = rec.copy()
            body["status"] = _running(rnd, body.get("status"))
            _attempt(
                log, api, rd, name, lambda b=body, w=who: api.update(rd, "default", name, b, w, "status")
            )
        elif kind == "status-patch":
            patch = {"status": {"conditions": _status(rnd)["conditions"]}}
            _attempt(
                log,
                api,
                rd,
                name,
                lambda p=patch, w=who: api.patch(rd, "default", name, p, MERGE, w, "status"),
            )
        elif kind == "label-patch":
            patch = {"metadata": {"labels": {rnd.choice("xyz"): rnd.choice(SCALARS)}}}
            _attempt(log, api, rd, name, lambda p=patch, w=who: api.patch(rd, "default", name, p, MERGE, w))
        else:
            body = rec.copy()
            body["metadata"]["labels"] = {rnd.choice("ab"): rnd.choice(["1", "2"])}
            if rnd.random() < 0.3:
                body["metadata"].pop("managedFields", None)
            _attempt(log, api, rd, name, lambda b=body, w=who: api.update(rd, "default", name, b, w))


def _group_writes(api: Any, rnd: random.Random, i: int, log: _Log) -> None:
    rd = api.registry.get("scheduling.k8s.io", "v1beta1", "podgroups")
    name = f"g{i}"
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "X",
                    "name": "o",
                    "uid": f"u-{rnd.randint(0, 3)}",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "workloadRef": {"workloadName": "w", "templateName": "t"},
            "schedulingPolicy": rnd.choice([{"gang": {"minCount": 2}}, {"basic": {}}]),
        },
    }
    _attempt(log, api, rd, name, lambda: api.create(rd, "default", group, WriteOptions(field_manager="ctl")))
    for _ in range(2):
        cond = {
            "type": "PodGroupScheduled",
            "status": rnd.choice(["True", "False"]),
            "reason": rnd.choice(["Scheduled", "Unschedulable", ""]),
            "message": "",
            "observedGeneration": 1,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        patch: dict[str, Any] = {"status": {"conditions": [cond]}}
        if rnd.random() < 0.3:
            patch["spec"] = {"disruptionMode": None}
        who = WriteOptions(field_manager="scheduler")
        _attempt(
            log, api, rd, name, lambda p=patch, w=who: api.patch(rd, "default", name, p, MERGE, w, "status")
        )


def _node_lease(i: int) -> dict[str, Any]:
    """Node ``l{i}``'s first Lease, as the node agent creates it."""
    name = f"l{i}"
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": f"n-{i}"}],
        },
        "spec": {
            "holderIdentity": name,
            "leaseDurationSeconds": 40,
            "renewTime": "2026-01-01T00:00:00.000000Z",
        },
    }


def _lease_writes(api: Any, rnd: random.Random, i: int, log: _Log) -> None:
    """A node's Lease renewed as the node agent renews it (the last answer with a new renewTime),
    now and then by another manager or with a wrong type."""
    rd = api.registry.get("coordination.k8s.io", "v1", "leases")
    name = f"l{i}"
    lease = _node_lease(i)
    _attempt(
        log, api, rd, name, lambda: api.create(rd, "default", lease, WriteOptions(field_manager="agent"))
    )
    for second in range(1, 4):
        rec = api.store.get(api._skey(rd), api._key(rd, "default", name))
        if rec is None:
            return
        body = rec.copy()
        body["spec"]["renewTime"] = f"2026-01-01T00:00:0{second}.000000Z"
        if rnd.random() < 0.2:
            body["spec"]["leaseDurationSeconds"] = rnd.choice([41, "40"])
        who = WriteOptions(field_manager=rnd.choice(["agent", "agent", "agent", "other"]))
        _attempt(log, api, rd, name, lambda b=body, w=who: api.update(rd, "default", name, b, w))


def _plain_union(self: fieldpath.FieldSet, other: fieldpath.FieldSet) -> fieldpath.FieldSet:
    """The union as it was: a new set unless ``other`` adds nothing to ``self``."""
    paths = self.paths | other.paths
    return self if len(paths) == len(self.paths) else fieldpath.FieldSet._wrap(paths)


def _run(seed: int, fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(fieldpath, "_PARSE_MEMO_DEPTH", 0)
            m.setattr(fieldpath, "_canonical_next", lambda *_: False)
            m.setattr(StatefulSetStrategy, "defaults_only_replaced_by_status", False)
            m.setattr(PodGroupStrategy, "defaults_only_replaced_by_status", False)
            # a new set's shared tree decoded from its text, not built from the encoder's parts
            m.setattr(sharedtrees, "canonical_json_built", lambda text, _build: canonical_json(text))
            m.setattr(fieldpath.FieldSet, "stored_tree", lambda _self: None)
            # every pair compared by a walk (no pair memo), every one-sided subtree walked
            # (atomic ones too), and a union always a new set
            m.setattr(apply_mod, "_PAIR_DEPTH", 0)
            m.setattr(apply_mod, "_MEMO_DEPTH", 0)
            m.setattr(fieldpath.FieldSet, "union", _plain_union)
            m.setattr(fieldpath.FieldSet, "__or__", _plain_union)
            m.setattr(apply_mod, "_kept_set", lambda fields, _before: fields)
            m.setattr(apply_mod, "remember_joined", lambda *_: False)
        for table in (
            fieldpath._DECODED,
            fieldpath._ENCODED,
            fieldpath._STORED_PARSES,
            fieldpath._JOINED,
            sharedtrees._PARTS,
        ):
            table.clear()
        apply_mod._PAIRS.clear()
        apply_mod._WALKS.clear()
        api = build_api(clock=FakeClock())
        rnd = random.Random(seed)
        log = _Log()
        for i in range(30):
            _pod_writes(api, rnd, i, log)
            if i % 3 == 0:
                _group_writes(api, rnd, i, log)
            if i % 3 == 1:
                _lease_writes(api, rnd, i, log)
        return log


@pytest.mark.parametrize("seed", range(3))
def test_writes_answer_and_store_the_same_with_and_without_the_fast_paths(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _run(seed, True, monkeypatch)
    general = _run(seed, False, monkeypatch)
    assert len(fast) == len(general)
    for a, b in zip(fast, general, strict=True):
        assert a == b
    # the sequences wrote (and refused) something: the comparison is not vacuous
    assert sum(1 for e in fast if e[0] == "stored") > 60
    assert any(e[0] == "error" for e in fast)
