"""controllers/customresources.py: what an Established CRD serves, as the GC and namespace controller see it."""

from __future__ import annotations

import copy

from apiserver.client.interface import GVR
from controllers.customresources import custom_resources
from tests.crd_support import crontab_crd


def established(crd: dict) -> dict:
    out = copy.deepcopy(crd)
    out["status"] = {
        "acceptedNames": dict(out["spec"]["names"]),
        "conditions": [{"type": "Established", "status": "True"}],
    }
    return out


def test_nothing_until_established() -> None:
    assert custom_resources(crontab_crd()) == []


def test_served_versions_preferred_first_with_accepted_names() -> None:
    crd = crontab_crd(scope="Cluster")
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [
        {**v1, "name": "v1alpha1", "storage": False},
        v1,
        {**v1, "name": "v2beta1", "storage": False},
        {**v1, "name": "v0", "served": False, "storage": False},
    ]
    got = custom_resources(established(crd))
    assert [r.gvr for r in got] == [
        GVR("stable.example.com", "v1", "crontabs"),
        GVR("stable.example.com", "v2beta1", "crontabs"),
        GVR("stable.example.com", "v1alpha1", "crontabs"),
    ]
    assert {(r.kind, r.namespaced) for r in got} == {("CronTab", False)}
