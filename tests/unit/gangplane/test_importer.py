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
    assert kinds == ["Namespace", "PriorityClass", "Node", "Pod", "Pod"]
    ns, pc, node, p, pending = plan.create
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
    # a pending pod is created unbound, for the scheduler to place
    assert "nodeName" not in pending["spec"] and pending["metadata"]["name"] == "pending"
    assert plan.pending == ["team/pending"]
    skipped = {k: dict(v) for k, v in plan.skipped.items()}
    assert skipped["Pod"] == {
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
    assert "Pod             2          1 finished; 1 its node is not imported" in text
    assert "1 of the pods are pending: created unbound, for the scheduler to place" in text


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


OLD_UID = "0f1e2d3c-0000-4000-8000-000000000001"


def job(name: str, *, conditions: list | None = None, manual: bool = False, cron: str = "") -> dict:
    """A Job as kubectl dumps it from a cluster: kube's generated selector and labels, a status."""
    generated = {
        "batch.kubernetes.io/controller-uid": OLD_UID,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": OLD_UID,
        "job-name": name,
    }
    meta: dict = {
        "name": name,
        "namespace": "team",
        "uid": OLD_UID,
        "resourceVersion": "9",
        "labels": {**generated, "team": "ml"},
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
    }
    if cron:
        meta["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "CronJob", "name": cron, "uid": "c", "controller": True}
        ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "parallelism": 2,
            "completions": 4,
            **({"manualSelector": True} if manual else {}),
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": OLD_UID}},
            "template": {
                "metadata": {"labels": {**generated, "team": "ml"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]},
            },
        },
        "status": {"active": 2, "conditions": conditions or []},
    }


def job_pod(name: str, owner: str, node: str = "", phase: str = "Running") -> dict:
    p = pod(name, node, phase)
    p["metadata"]["labels"] = {"batch.kubernetes.io/controller-uid": OLD_UID, "job-name": owner}
    p["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking", "example.com/other"]
    p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] = "1"
    p["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": owner, "uid": OLD_UID, "controller": True}
    ]
    return p


def created(plan, kind: str, name: str) -> dict:
    (obj,) = [o for o in plan.create if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


def test_a_job_without_pods_to_take_over_gets_its_selector_generated_anew() -> None:
    plan = plan_import([job("train")], workloads=True)
    j = created(plan, "Job", "train")
    assert j["apiVersion"] == "batch/v1"
    assert "status" not in j and "selector" not in j["spec"] and "manualSelector" not in j["spec"]
    # the source's UID and name labels go: the target's Job strategy generates them from the new UID
    assert j["spec"]["template"]["metadata"]["labels"] == {"team": "ml"}
    assert j["metadata"] == {"name": "train", "namespace": "team", "labels": {"team": "ml"}}
    assert j["__owners"] == []


def test_a_job_whose_running_pods_are_imported_takes_them_over_with_its_source_selector() -> None:
    plan = plan_import(
        [NODE, job("train"), job_pod("train-a", "train", "n1"), job_pod("train-b", "train")], workloads=True
    )
    j = created(plan, "Job", "train")
    # kube's documented hand-over of running pods to a new Job: the old selector, manualSelector
    assert j["spec"]["manualSelector"] is True
    assert j["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": OLD_UID}}
    assert j["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == OLD_UID
    running = created(plan, "Pod", "train-a")
    assert running["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == OLD_UID
    # what the Job controller reads back: the tracking finalizer and the completion index
    assert running["__finalizers"] == ["batch.kubernetes.io/job-tracking"]  # written once linked
    assert "finalizers" not in running["metadata"]
    assert running["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "1"
    assert running["__owners"][0]["kind"] == "Job" and running["__owners"][0]["name"] == "train"
    # the pending one is left to the Job controller, which creates its like
    assert [o["metadata"]["name"] for o in plan.create if o["kind"] == "Pod"] == ["train-a"]
    assert dict(plan.skipped["Pod"]) == {"pending, left to its imported Job's controller": ["team/train-b"]}
    assert plan.pending == []
    # pods before their Job, so that it adopts them instead of creating new ones
    kinds = [o["kind"] for o in plan.create]
    assert kinds.index("Pod") < kinds.index("Job")


def test_a_job_with_its_own_selector_is_imported_as_it_is() -> None:
    plan = plan_import([job("train", manual=True)], workloads=True)
    j = created(plan, "Job", "train")
    assert j["spec"]["manualSelector"] is True
    assert j["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": OLD_UID}}


def test_finished_jobs_and_their_pods_are_left_out() -> None:
    done = job("done", conditions=[{"type": "Complete", "status": "True"}])
    failed = job("failed", conditions=[{"type": "Failed", "status": "True"}])
    running = job("running", conditions=[{"type": "Suspended", "status": "False"}])
    plan = plan_import(
        [NODE, done, failed, running, job_pod("done-x", "done", "n1", "Succeeded")], workloads=True
    )
    assert [o["metadata"]["name"] for o in plan.create if o["kind"] == "Job"] == ["running"]
    assert dict(plan.skipped["Job"]) == {
        "finished (created anew, it would run again)": ["team/done", "team/failed"]
    }
    assert dict(plan.skipped["Pod"]) == {"finished": ["team/done-x"]}


def test_without_workloads_pending_pods_of_a_job_are_imported_on_their_own() -> None:
    plan = plan_import([job("train"), job_pod("train-b", "train")])
    assert dict(plan.skipped["Job"]) == {"a workload (--workloads imports it)": ["team/train"]}
    p = created(plan, "Pod", "train-b")
    assert "__owners" not in p and "__finalizers" not in p and "nodeName" not in p["spec"]
    assert plan.pending == ["team/train-b"]


def test_pending_pods_keep_their_scheduling_gates() -> None:
    p = pod("gated")
    p["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    plan = plan_import([p])
    assert created(plan, "Pod", "gated")["spec"]["schedulingGates"] == [{"name": "example.com/quota"}]


def test_cronjobs_come_before_their_jobs_which_keep_the_owner_to_relink() -> None:
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "team", "uid": "c"},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {}}}}},
        "status": {"active": [{"kind": "Job", "name": "nightly-1"}]},
    }
    plan = plan_import([job("nightly-1", cron="nightly"), cron], workloads=True)
    assert [o["kind"] for o in plan.create] == ["Namespace", "CronJob", "Job"]
    c = created(plan, "CronJob", "nightly")
    assert c["apiVersion"] == "batch/v1" and "status" not in c
    assert created(plan, "Job", "nightly-1")["__owners"][0]["name"] == "nightly"


def test_only_a_jobs_pods_keep_what_the_job_controller_reads_back() -> None:
    rs_pod = pod("web-1", "n1")
    rs_pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "r", "controller": True}
    ]
    rs_pod["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    rs = {"kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "team"}, "spec": {}}
    plan = plan_import([NODE, rs, rs_pod], workloads=True)
    p = created(plan, "Pod", "web-1")
    assert "__finalizers" not in p and p["__owners"][0]["kind"] == "ReplicaSet"
