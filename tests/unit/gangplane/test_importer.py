"""``gangplane import``'s plan: what a dump's objects become, and why the rest is left out."""

from __future__ import annotations

from pathlib import Path

from gangplane.importer import Report, plan_import, read_dumps, render_report


def pod(name: str, node: str = "", phase: str = "Running", ns: str = "team") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": "u",
            "resourceVersion": "7",
            "labels": {"app": "x"},
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "gangplane.dev/never-ready": "true",
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": "r"}],
        },
        "spec": {
            "nodeName": node,
            "priority": 100,
            "priorityClassName": "batch",
            "serviceAccountName": "builder",
            "volumes": [{"name": "v", "secret": {"secretName": "s"}}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "s", "key": "p"}}}],
                    "volumeMounts": [{"name": "v", "mountPath": "/s"}],
                    "resources": {"requests": {"cpu": "1"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                }
            ],
        },
        "status": {"phase": phase},
    }


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "n1",
        "uid": "x",
        "labels": {"zone": "a"},
        "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
    },
    "spec": {
        "podCIDR": "10.0.0.0/24",
        "taints": [{"key": "d", "value": "v", "effect": "NoSchedule", "timeAdded": None}],
    },
    "status": {
        "capacity": {"cpu": "4"},
        "allocatable": {"cpu": "3"},
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def test_the_plan_keeps_what_scheduling_reads_and_says_what_it_left_out() -> None:
    objects = [
        NODE,
        {"kind": "Namespace", "metadata": {"name": "kube-system"}},
        {"kind": "PriorityClass", "metadata": {"name": "system-node-critical"}, "value": 2000001000},
        {
            "kind": "PriorityClass",
            "metadata": {"name": "batch", "uid": "p"},
            "value": 100,
            "preemptionPolicy": "Never",
        },
        pod("run", "n1"),
        pod("pending"),
        pod("done", "n1", "Succeeded"),
        pod("elsewhere", "n9"),
        {"kind": "Secret", "metadata": {"name": "s", "namespace": "team"}},
        {"kind": "Service", "metadata": {"name": "svc", "namespace": "team"}},
    ]
    plan = plan_import(objects)
    kinds = [o["kind"] for o in plan.create]
    assert kinds == ["Namespace", "PriorityClass", "Node", "Pod"]
    ns, pc, node, p = plan.create
    assert ns["metadata"] == {"name": "team"}  # created for its pods
    assert pc == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch"},
        "value": 100,
        "preemptionPolicy": "Never",
    }
    assert node["metadata"] == {"name": "n1", "labels": {"zone": "a"}}
    assert node["spec"] == {"taints": [{"key": "d", "value": "v", "effect": "NoSchedule"}]}
    assert node["status"] == {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}}
    assert p["metadata"] == {
        "name": "run",
        "namespace": "team",
        "labels": {"app": "x"},
        "annotations": {"gangplane.dev/never-ready": "true"},
    }
    assert p["spec"] == {
        "nodeName": "n1",
        "priorityClassName": "batch",
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "containers": [
            {
                "name": "c",
                "image": "i",
                "resources": {"requests": {"cpu": "1"}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
            }
        ],
        "automountServiceAccountToken": False,
    }
    skipped = {k: dict(v) for k, v in plan.skipped.items()}
    assert skipped["Pod"] == {
        "not bound to a node": ["team/pending"],
        "finished": ["team/done"],
        "its node is not imported": ["team/elsewhere"],
    }
    assert skipped["Secret"] == {"secrets are never imported": ["team/s"]}
    assert skipped["Service"] == {"not needed for scheduling": ["team/svc"]}
    assert skipped["Namespace"] == {"exists in every cluster": ["kube-system"]}
    assert skipped["PriorityClass"] == {"exists in every cluster": ["system-node-critical"]}
    report = Report()
    report.imported.update(kinds)
    text = render_report("dump.yaml", plan, report)
    assert "Pod             1          1 finished; 1 its node is not imported; 1 not bound to a node" in text


def test_dumps_unwrap_lists_and_typed_lists(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n"
        "---\napiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: b}\n"
    )
    assert [(o["kind"], o["metadata"]["name"]) for o in read_dumps([str(f)])] == [
        ("Node", "a"),
        ("Node", "b"),
    ]
