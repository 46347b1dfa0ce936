"""An update's new fieldsV1 encoding made from its shape's template (:mod:`apiserver.patch.updateentry`).

The template is only sound if it gives exactly what the general encoder gives: these tests
encode random pod status field sets (IPv4 and IPv6 pod and host IPs, several of each, shared
between the two lists, in upper and lower case, container statuses of random names, conditions,
extra fields, IPs the template must not take, a field named like a placeholder) through the
templates and through a table-free emission, and compare the bytes, the shared tree, and
whether the encoding decodes to its set. The registry hook is compared the same way on random
status writes of stored pods (the node agent's write).
"""

from __future__ import annotations

import copy
import random
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.fieldpath import FieldSet, fields_of
from apiserver.patch.tracker import FieldTracker
from apiserver.patch.updateentry import UpdatedEntryTemplates

POD = schema.for_gvk("", "v1", "Pod")
T0 = "2026-12-05T08:00:00Z"
T1 = "2026-12-05T08:00:05Z"


def _ipv4(rnd: random.Random) -> str:
    return ".".join(str(rnd.randrange(256)) for _ in range(4))


def _ipv6(rnd: random.Random) -> str:
    groups = [f"{rnd.randrange(65536):x}" for _ in range(8)]
    text = ":".join(groups) if rnd.random() < 0.5 else f"fd00::{groups[0]}:{groups[1]}"
    return text.upper() if rnd.random() < 0.2 else text


def _odd_ip(rnd: random.Random) -> Any:
    """Values the templates must leave to the general path (or keep exact through it)."""
    return rnd.choice(["10.0.0.1 ", "ä.1", 'a"b', "x\\y", "", "~000000", 7, None, "10.0.0.1\n"])


def _ips(rnd: random.Random, n: int) -> list[str]:
    return [_ipv4(rnd) if rnd.random() < 0.6 else _ipv6(rnd) for _ in range(n)]


def _random_status(rnd: random.Random, i: int) -> Obj:
    pod_ips = _ips(rnd, rnd.choice([1, 1, 1, 2, 3]))
    host_ips = rnd.choice([[], ["192.168.0.1"], _ips(rnd, 1), _ips(rnd, 2), pod_ips[:1]])
    status: dict[str, Any] = {
        "phase": rnd.choice(["Running", "Pending"]),
        "conditions": [
            {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": T0}
            for t in rnd.choice(
                [["PodScheduled"], ["PodScheduled", "Initialized", "ContainersReady", "Ready"]]
            )
        ],
        "podIP": pod_ips[0],
        "podIPs": [{"ip": ip} for ip in pod_ips],
        "startTime": T0,
    }
    if host_ips:
        status["hostIP"] = host_ips[0]
        status["hostIPs"] = [{"ip": ip} for ip in host_ips]
    names = rnd.choice([[], ["c"], ["c"], ["app", "side-car"], ["x~000001"]])
    if names:
        status["containerStatuses"] = [
            {
                "name": n,
                "image": "registry.k8s.io/pause:3.10",
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": T0}},
            }
            for n in names
        ]
    roll = rnd.random()
    if roll < 0.08:
        status["podIPs"].append({"ip": _odd_ip(rnd)})
    elif roll < 0.14:
        status["podIPs"][0]["zone"] = "a"  # another field under the keyed item
    elif roll < 0.18:
        status["~000000"] = "x"  # an unknown field named like a placeholder
    elif roll < 0.22:
        status["hostIPs"] = [{"ip": ip} for ip in pod_ips]  # host network: the same IPs twice
    elif roll < 0.25:
        status["podIPs"] = []
        status.pop("podIP")
    return {"status": status, "metadata": {"labels": {"i": str(i % 3)}} if rnd.random() < 0.2 else {}}


def _general(fs: FieldSet) -> bytes:
    """The encoder's emission, without any of its tables."""
    return orjson.dumps(fs.fresh_fields_v1())


@pytest.mark.parametrize("seed", range(6))
def test_templated_encoding_is_the_general_one_on_random_status_sets(seed: int) -> None:
    rnd = random.Random(seed)
    templates = UpdatedEntryTemplates()
    sets = 0
    for i in range(150):
        obj = _random_status(rnd, seed * 1000 + i)
        fs = fields_of(obj, POD)
        expected = _general(fs)
        # a fresh set of the same paths, so no table of the encoder knows it yet
        mine = FieldSet._wrap(frozenset(fs.paths))
        tree = templates.fields_v1(mine)
        assert orjson.dumps(tree) == expected
        assert mine.fields_v1_json() == expected
        # decoding the encoding gives the set back exactly when the encoder says it does
        assert mine.decodes_to_itself() == (FieldSet.from_fields_v1(orjson.loads(expected)) == fs)
        sets += 1
    # most shapes recur (random IPs over a handful of layouts): the templates were used
    assert len(templates._table) < sets / 2
    assert sum(t is not None for t in templates._table.values()) > len(templates._table) / 2


def test_a_template_is_kept_only_after_its_verification() -> None:
    """A field named like a placeholder would be rewritten by the substitution: never templated."""
    templates = UpdatedEntryTemplates()
    for i in range(3):
        obj = {"status": {"podIPs": [{"ip": f"10.0.0.{i}"}], "~000000": "x"}}
        fs = fields_of(obj, POD)
        expected = _general(fs)
        mine = FieldSet._wrap(frozenset(fs.paths))
        assert orjson.dumps(templates.fields_v1(mine)) == expected
    assert list(templates._table.values()) == [None]


def test_instances_share_the_template_parts_and_get_their_own_ip_parts() -> None:
    templates = UpdatedEntryTemplates()
    trees = []
    for ip in ("10.0.0.1", "10.0.0.2", "fd00::1"):
        obj = {"status": {"phase": "Running", "podIPs": [{"ip": ip}], "conditions": [{"type": "Ready"}]}}
        trees.append(templates.fields_v1(FieldSet._wrap(frozenset(fields_of(obj, POD).paths))))
    a, b, c = (t["f:status"] for t in trees)
    assert a["f:conditions"] is b["f:conditions"] is c["f:conditions"]
    assert list(b["f:podIPs"]) == ['k:{"ip":"10.0.0.2"}']
    assert list(c["f:podIPs"]) == ['k:{"ip":"fd00::1"}']


def _stored(obj: Obj) -> Obj:
    return orjson.loads(orjson.dumps(obj))


@pytest.mark.parametrize("seed", range(3))
def test_status_writes_record_the_general_entries(seed: int) -> None:
    """The registry hook (the node agent's status write of a created pod) against the general
    path without tables, entry by entry as text."""
    rnd = random.Random(100 + seed)
    tracker = FieldTracker()
    rd = SimpleNamespace(group="", version="v1", kind="Pod", api_version="v1", is_view=False)
    for i in range(60):
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{seed}-{i}"},
            "spec": {"containers": [{"name": "c", "image": "pause"}], "nodeName": "n1"},
        }
        tracker.on_create(rd, pod, SimpleNamespace(field_manager="sts"), T0)
        live = _stored(pod)
        body = copy.deepcopy(live)
        body["status"] = _random_status(rnd, i)["status"]
        expected = updated_managed_fields(
            live,
            body,
            "kubelet",
            POD,
            T1,
            "v1",
            subresource="status",
            fields_v1=FieldSet.fresh_fields_v1,
            old_is_stored=True,
        )
        tracker.on_update(rd, live, body, SimpleNamespace(field_manager="kubelet"), "Update", "status", T1)
        assert orjson.dumps(body["metadata"]["managedFields"]) == orjson.dumps(expected)
