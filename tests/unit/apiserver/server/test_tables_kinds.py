"""Table printers of the everyday kinds: the columns and cells kube's printers produce."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from apiserver.server.tables import to_table

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
CREATED = "2026-03-01T11:59:00Z"


def row(group: str, plural: str, obj: dict[str, Any]) -> tuple[list[str], list[Any]]:
    obj.setdefault("metadata", {}).setdefault("name", "x")
    obj["metadata"].setdefault("creationTimestamp", CREATED)
    t = to_table(group, plural, [obj], NOW, "1")
    return [c["name"] for c in t["columnDefinitions"]], t["rows"][0]["cells"]


@pytest.mark.parametrize(
    ("group", "plural", "obj", "columns", "cells"),
    [
        ("rbac.authorization.k8s.io", "roles", {}, ["Name", "Created At"], ["x", CREATED]),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            {
                "roleRef": {"kind": "ClusterRole", "name": "view"},
                "subjects": [
                    {"kind": "User", "name": "alice"},
                    {"kind": "User", "name": "bob"},
                    {"kind": "Group", "name": "devs"},
                    {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
                ],
            },
            ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
            ["x", "ClusterRole/view", "60s", "alice, bob", "devs", "ns:sa"],
        ),
        (
            "",
            "replicationcontrollers",
            {
                "spec": {
                    "replicas": 3,
                    "selector": {"b": "2", "a": "1"},
                    "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                },
                "status": {"replicas": 2, "readyReplicas": 1},
            },
            ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
            ["x", 3, 2, 1, "60s", "c", "nginx", "a=1,b=2"],
        ),
        (
            "",
            "podtemplates",
            {
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                }
            },
            ["Name", "Containers", "Images", "Pod Labels"],
            ["x", "c", "i", "app=web"],
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            {
                "metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                "provisioner": "example.com/p",
                "reclaimPolicy": "Retain",
                "volumeBindingMode": "WaitForFirstConsumer",
                "allowVolumeExpansion": True,
            },
            ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
            ["x (default)", "example.com/p", "Retain", "WaitForFirstConsumer", "true", "60s"],
        ),
        (
            "storage.k8s.io",
            "csidrivers",
            {
                "spec": {
                    "attachRequired": False,
                    "tokenRequests": [{"audience": "a"}, {"audience": "b"}],
                    "volumeLifecycleModes": ["Persistent", "Ephemeral"],
                }
            },
            [
                "Name",
                "AttachRequired",
                "PodInfoOnMount",
                "StorageCapacity",
                "TokenRequests",
                "RequiresRepublish",
                "Modes",
                "Age",
            ],
            ["x", False, False, False, "a,b", False, "Persistent,Ephemeral", "60s"],
        ),
        (
            "networking.k8s.io",
            "ingresses",
            {
                "spec": {
                    "rules": [{"host": h} for h in ("a.io", "b.io", "c.io", "d.io")],
                    "tls": [{"hosts": ["a.io"]}],
                },
                "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}]}},
            },
            ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
            ["x", "<none>", "a.io,b.io,c.io + 1 more...", "10.0.0.2,lb.example.com", "80, 443", "60s"],
        ),
        (
            "networking.k8s.io",
            "ingressclasses",
            {
                "spec": {
                    "controller": "k8s.io/ingress-nginx",
                    "parameters": {"apiGroup": "k8s.example.com", "kind": "P", "name": "n"},
                }
            },
            ["Name", "Controller", "Parameters", "Age"],
            ["x", "k8s.io/ingress-nginx", "P.k8s.example.com/n", "60s"],
        ),
        (
            "networking.k8s.io",
            "networkpolicies",
            {"spec": {"podSelector": {"matchLabels": {"app": "db"}}}},
            ["Name", "Pod-Selector", "Age"],
            ["x", "app=db", "60s"],
        ),
        (
            "autoscaling",
            "horizontalpodautoscalers",
            {
                "spec": {
                    "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                    "minReplicas": 1,
                    "maxReplicas": 5,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 80},
                            },
                        }
                    ],
                },
                "status": {"currentReplicas": 2},
            },
            ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
            ["x", "Deployment/web", "cpu: <unknown>/80%", "1", 5, 2, "60s"],
        ),
        (
            "apiregistration.k8s.io",
            "apiservices",
            {
                "spec": {},
                "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]},
            },
            ["Name", "Service", "Available", "Age"],
            ["x", "Local", "True", "60s"],
        ),
        (
            "apiregistration.k8s.io",
            "apiservices",
            {
                "spec": {"service": {"namespace": "ns", "name": "metrics"}},
                "status": {
                    "conditions": [{"type": "Available", "status": "False", "reason": "ServiceNotFound"}]
                },
            },
            ["Name", "Service", "Available", "Age"],
            ["x", "ns/metrics", "False (ServiceNotFound)", "60s"],
        ),
    ],
)
def test_kind_printers(
    group: str, plural: str, obj: dict[str, Any], columns: list[str], cells: list[Any]
) -> None:
    got_columns, got_cells = row(group, plural, obj)
    assert got_columns == columns
    assert got_cells == cells


def test_hpa_with_current_metrics_and_many_targets() -> None:
    metric = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    mem = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}},
    }
    pods = {
        "type": "Pods",
        "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}},
    }
    _, cells = row(
        "autoscaling",
        "horizontalpodautoscalers",
        {
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "maxReplicas": 3,
                "metrics": [metric, mem, pods],
            },
            "status": {
                "currentMetrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 30}}}
                ]
            },
        },
    )
    assert cells[2] == "cpu: 30%/50%, memory: <unknown>/1Gi + 1 more..."
    assert cells[3] == "<unset>"


@pytest.mark.anyio
async def test_kubectl_get_crd_prints_name_and_created_at() -> None:
    """``kubectl get crd`` over the API: kube's NAME / CREATED AT columns for CustomResourceDefinitions."""
    import httpx

    from apiserver.client.interface import GVR
    from gangplane.controlplane import ControlPlane
    from tests.crd_support import crontab_crd

    cp = ControlPlane()
    crd = await cp.client("test").create(
        GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions"), crontab_crd()
    )
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    transport = httpx.ASGITransport(app=cp.app.asgi())
    async with httpx.AsyncClient(transport=transport, base_url="http://gangplane") as http:
        resp = await http.get(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", headers={"Accept": accept}
        )
    table = resp.json()
    assert resp.status_code == 200 and table["kind"] == "Table"
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Created At", "date"),
    ]
    assert table["rows"][0]["cells"] == [crd["metadata"]["name"], crd["metadata"]["creationTimestamp"]]
    await cp.stop()
