"""``GenericStore.live_records`` and the counts and lookups made through it, against the
storage's own ``count``/``get`` after every step of random creates, updates and deletes
(namespaced and cluster-scoped; resources never written; a storage swapped in)."""

from __future__ import annotations

import random

import pytest

from apiserver import errors
from apiserver.registry.generic import WriteOptions
from apiserver.server.instance import build_api
from apiserver.storage.memory import MemoryStorage

RESOURCES = [("", "v1", "configmaps", True), ("scheduling.k8s.io", "v1", "priorityclasses", False)]
ASKED = [("", "configmaps"), ("scheduling.k8s.io", "priorityclasses"), ("", "secrets"), ("x.io", "nothings")]


def _body(group: str, plural: str, name: str, rnd: random.Random) -> dict:
    if plural == "configmaps":
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name},
            "data": {"k": str(rnd.random())},
        }
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": 7,
    }


def _check(api: object) -> None:
    store = api.store  # type: ignore[attr-defined]
    for group, plural in ASKED:
        assert api.stored_count(group, plural) == store.count((group, plural))  # type: ignore[attr-defined]
        live = api.live_records(group, plural)  # type: ignore[attr-defined]
        recs, _, _ = store.list((group, plural))
        assert len(live) == len(recs)
        for rec in recs:
            md = rec.obj["metadata"]
            key = (md.get("namespace", ""), md["name"])
            assert live[key] is store.get((group, plural), key)
            got = api.peek(group, plural, key[0], key[1])  # type: ignore[attr-defined]
            assert got == rec.obj
        assert api.peek(group, plural, "default", "absent") is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(3))
def test_counts_and_lookups_follow_the_storage(seed: int) -> None:
    rnd = random.Random(seed)
    api = build_api()
    for step in range(200):
        group, version, plural, namespaced = rnd.choice(RESOURCES)
        rd = api.registry.get(group, version, plural)
        name = f"o{rnd.randrange(8)}"
        ns = rnd.choice(["default", "kube-system"]) if namespaced else ""
        try:
            roll = rnd.random()
            if roll < 0.5:
                api.create(rd, ns, _body(group, plural, name, rnd), WriteOptions())
            elif roll < 0.75:
                body = api.get(rd, ns, name).copy()
                body.setdefault("metadata", {}).setdefault("labels", {})["step"] = str(step)
                api.update(rd, ns, name, body, WriteOptions())
            else:
                api.delete(rd, ns, name)
        except errors.StatusError:
            pass
        _check(api)
    # a storage swapped in: the dicts held are the old storage's, so they are dropped
    api.store = MemoryStorage()
    _check(api)
    assert api.stored_count("", "configmaps") == 0
