"""Index functions' ``index_reads`` declarations name everything the functions read.

An informer skips an index function on an update when the fields it declared are equal in the
old and the new object, so a declaration that left a field out would leave a stale index. For
each shipped declared function: random pods, and for each a twin that differs in random fields
*outside* the declaration (never the key: name and namespace), must index alike. And an
informer fed random updates holds the indices built from scratch, whether its functions are
declared or not.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.client.informer import (
    IndexFunc,
    Informer,
    controller_uid_index,
    index_reads,
    label_index,
    namespace_index,
    node_name_index,
    owner_uid_index,
    reads_of,
)
from apiserver.client.interface import PODS
from controllers.job.controller import unowned_index
from controllers.podgroupprotection import pod_group_key
from controllers.podutil import orphan_index
from controllers.resourceclaim.controller import _pod_group_key
from controllers.statefulset.controller import member_index
from controllers.statefulset.controller import orphan_index as sts_orphan_index
from resourceclaims.claims import pod_claim_keys

DECLARED: dict[str, IndexFunc] = {
    "namespace": namespace_index,
    "owner-uid": owner_uid_index,
    "controller-uid": controller_uid_index,
    "node-name": node_name_index,
    "label-app": label_index("app"),
    "statefulset-member": member_index,
    "statefulset-orphans": sts_orphan_index,
    "orphans": orphan_index,
    "job-unowned": unowned_index,
    "pod-group": pod_group_key,
    "claim-pod-group": _pod_group_key,
    "claim-name": pod_claim_keys,
}

#: every field the generator varies, by (section, field)
FIELDS: dict[tuple[str, str], Any] = {
    ("metadata", "labels"): lambda r: r.choice([None, {}, {"app": r.choice("ab")}, {"app": "a", "x": "1"}]),
    ("metadata", "ownerReferences"): lambda r: r.choice(
        [
            None,
            [],
            [{"uid": r.choice(["u1", "u2"]), "controller": True, "kind": "StatefulSet", "name": "s"}],
            [{"uid": "u3", "kind": "ReplicaSet", "name": "r"}],
        ]
    ),
    ("metadata", "resourceVersion"): lambda r: str(r.randrange(100)),
    ("metadata", "finalizers"): lambda r: r.choice([None, ["x/y"]]),
    ("metadata", "deletionTimestamp"): lambda r: r.choice([None, "2027-01-01T00:00:00Z"]),
    ("spec", "nodeName"): lambda r: r.choice([None, "", "n1", "n2"]),
    ("spec", "schedulingGroup"): lambda r: r.choice([None, {}, {"podGroupName": r.choice(["g1", "g2"])}]),
    ("spec", "resourceClaims"): lambda r: r.choice(
        [
            None,
            [],
            [{"name": "c", "resourceClaimName": "rc1"}],
            [{"name": "t", "resourceClaimTemplateName": "tpl"}],
        ]
    ),
    ("spec", "containers"): lambda r: [{"name": "c", "image": r.choice(["a", "b"])}],
    ("status", "phase"): lambda r: r.choice([None, "Pending", "Running"]),
    ("status", "resourceClaimStatuses"): lambda r: r.choice(
        [None, [], [{"name": "t", "resourceClaimName": r.choice(["gen-1", "gen-2"])}], [{"name": "t"}]]
    ),
    ("status", "conditions"): lambda r: [{"type": "Ready", "status": r.choice(["True", "False"])}],
}


def _pod(rnd: random.Random, name: str = "web-0", ns: str = "x") -> dict[str, Any]:
    pod: dict[str, Any] = {"metadata": {"name": name, "namespace": ns}, "spec": {}, "status": {}}
    for (section, field), gen in FIELDS.items():
        v = gen(rnd)
        if v is not None:
            pod[section][field] = v
    return pod


def _twin(rnd: random.Random, pod: dict[str, Any], keep: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    twin: dict[str, Any] = orjson.loads(orjson.dumps(pod))
    for (section, field), gen in FIELDS.items():
        if (section, field) in keep or rnd.random() < 0.5:
            continue
        v = gen(rnd)
        if v is None:
            twin[section].pop(field, None)
        else:
            twin[section][field] = v
    return twin


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_a_declared_index_function_reads_only_what_it_declares(name: str) -> None:
    fn = DECLARED[name]
    reads = reads_of(fn)
    assert reads is not None, f"{name} has no index_reads declaration"
    rnd = random.Random(name)
    moved = 0
    for _ in range(400):
        pod = _pod(rnd, rnd.choice(["web-0", "web-1", "solo"]))
        twin = _twin(rnd, pod, reads)
        assert fn(twin) == fn(pod), (name, pod, twin)
        moved += fn(_pod(rnd, pod["metadata"]["name"])) != fn(pod)
    if reads:  # the generator does vary what the function reads
        assert moved > 0


@index_reads("spec.nodeName")
def _declared_node(obj: dict[str, Any]) -> list[str]:
    n = (obj.get("spec") or {}).get("nodeName")
    return [n] if n else []


def _undeclared_group(obj: dict[str, Any]) -> list[str]:
    g = ((obj.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    return [g] if g else []


@pytest.mark.parametrize("seed", range(8))
def test_indices_after_random_updates_equal_indices_from_scratch(seed: int) -> None:
    rnd = random.Random(seed)
    fns = {**DECLARED, "declared-node": _declared_node, "undeclared-group": _undeclared_group}
    inf = Informer(None, PODS)  # type: ignore[arg-type]  # fed directly, never started
    for n, fn in fns.items():
        if n != "namespace":
            inf.add_indexer(n, fn)
    keys = [(ns, f"web-{i}") for ns in ("x", "y") for i in range(5)]
    for _ in range(500):
        ns, name = rnd.choice(keys)
        held = inf.get_by_name(ns, name)
        if held is not None and rnd.random() < 0.1:
            inf._remove(held)
            continue
        if held is not None and rnd.random() < 0.7:
            obj = _twin(rnd, held, ())  # an update of some fields
        else:
            obj = _pod(rnd, name, ns)
        inf._upsert(obj)
        for n, fn in fns.items():
            want: dict[str, set[str]] = {}
            for key, o in inf._items.items():
                for v in fn(o):
                    want.setdefault(v, set()).add(key)
            assert inf._indices[n] == want, n
