"""Server-side Table printing: columns and cells as kube's printers produce them (kubectl.md §3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from apiserver.api.table import human_duration
from apiserver.errors import StatusError
from apiserver.server.negotiation import table_accept, table_version
from apiserver.server.tables import (
    NAME_DESCRIPTION,
    PRINTERS,
    include_object_param,
    pod_status_summary,
    printer_for,
    to_table,
)

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def ago(seconds: float) -> str:
    """An RFC 3339 timestamp ``seconds`` before NOW."""
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str = "x", age: float = 30, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "creationTimestamp": ago(age), **extra}


def row(group: str, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Column name -> cell for one object (all columns, the server always prints wide)."""
    table = to_table(group, plural, [obj], NOW, "7")
    names = [c["name"] for c in table["columnDefinitions"]]
    cells = table["rows"][0]["cells"]
    assert len(cells) == len(names)
    return dict(zip(names, cells, strict=True))


def columns(group: str, plural: str) -> tuple[list[str], list[str]]:
    """(normal columns, wide-only columns)."""
    defs = to_table(group, plural, [], NOW, "1")["columnDefinitions"]
    return [d["name"] for d in defs if d["priority"] == 0], [d["name"] for d in defs if d["priority"] > 0]


# ---------------------------------------------------------------------------------------------
# HumanDuration


@pytest.mark.parametrize(
    ("seconds", "want"),
    [
        (-3, "<invalid>"),
        (-2, "<invalid>"),
        (-1.5, "0s"),
        (-0.5, "0s"),
        (0, "0s"),
        (0.9, "0s"),
        (5, "5s"),
        (119.9, "119s"),
        (120, "2m"),
        (182, "3m2s"),
        (599, "9m59s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (5 * 3600 + 3 * 60 + 59, "5h3m"),
        (8 * 3600 - 1, "7h59m"),
        (8 * 3600, "8h"),
        (47 * 3600 + 3599, "47h"),
        (48 * 3600, "2d"),
        (2 * 86400 + 3 * 3600, "2d3h"),
        (8 * 86400 - 1, "7d23h"),
        (8 * 86400, "8d"),
        (729 * 86400, "729d"),
        (730 * 86400, "2y"),
        ((3 * 365 + 12) * 86400, "3y12d"),
        (8 * 365 * 86400, "8y"),
        (20 * 365 * 86400 + 86400, "20y"),
    ],
)
def test_human_duration_matches_apimachinery(seconds: float, want: str) -> None:
    assert human_duration(seconds) == want


# ---------------------------------------------------------------------------------------------
# column sets


@pytest.mark.parametrize(
    ("group", "plural", "normal", "wide"),
    [
        (
            "",
            "pods",
            ["Name", "Ready", "Status", "Restarts", "Age"],
            ["IP", "Node", "Nominated Node", "Readiness Gates"],
        ),
        (
            "",
            "nodes",
            ["Name", "Status", "Roles", "Age", "Version"],
            ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"],
        ),
        ("", "namespaces", ["Name", "Status", "Age"], []),
        ("", "services", ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"], ["Selector"]),
        ("", "endpoints", ["Name", "Endpoints", "Age"], []),
        ("", "configmaps", ["Name", "Data", "Age"], []),
        ("", "secrets", ["Name", "Type", "Data", "Age"], []),
        ("", "serviceaccounts", ["Name", "Secrets", "Age"], []),
        (
            "",
            "events",
            ["Last Seen", "Type", "Reason", "Object", "Message"],
            ["Subobject", "Source", "First Seen", "Count", "Name"],
        ),
        (
            "events.k8s.io",
            "events",
            ["Last Seen", "Type", "Reason", "Object", "Message"],
            ["Subobject", "Source", "First Seen", "Count", "Name"],
        ),
        (
            "",
            "persistentvolumeclaims",
            [
                "Name",
                "Status",
                "Volume",
                "Capacity",
                "Access Modes",
                "StorageClass",
                "VolumeAttributesClass",
                "Age",
            ],
            ["VolumeMode"],
        ),
        (
            "",
            "persistentvolumes",
            [
                "Name",
                "Capacity",
                "Access Modes",
                "Reclaim Policy",
                "Status",
                "Claim",
                "StorageClass",
                "VolumeAttributesClass",
                "Reason",
                "Age",
            ],
            ["VolumeMode"],
        ),
        ("", "limitranges", ["Name", "Created At"], []),
        ("", "resourcequotas", ["Name", "Request", "Limit", "Age"], []),
        ("apps", "statefulsets", ["Name", "Ready", "Age"], ["Containers", "Images"]),
        ("apps", "controllerrevisions", ["Name", "Controller", "Revision", "Age"], []),
        (
            "apps",
            "deployments",
            ["Name", "Ready", "Up-to-date", "Available", "Age"],
            ["Containers", "Images", "Selector"],
        ),
        (
            "apps",
            "replicasets",
            ["Name", "Desired", "Current", "Ready", "Age"],
            ["Containers", "Images", "Selector"],
        ),
        (
            "apps",
            "daemonsets",
            ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"],
            ["Containers", "Images", "Selector"],
        ),
        (
            "batch",
            "jobs",
            ["Name", "Status", "Completions", "Duration", "Age"],
            ["Containers", "Images", "Selector"],
        ),
        (
            "batch",
            "cronjobs",
            ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"],
            ["Containers", "Images", "Selector"],
        ),
        ("coordination.k8s.io", "leases", ["Name", "Holder", "Age"], []),
        (
            "policy",
            "poddisruptionbudgets",
            ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
            [],
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
            [],
        ),
        ("scheduling.k8s.io", "workloads", ["Name", "Controller", "Templates", "Age"], []),
        (
            "scheduling.k8s.io",
            "podgroups",
            ["Name", "Policy", "Min-Count", "Scheduled", "Age"],
            ["Workload", "Template", "Topology", "Disruption"],
        ),
        (
            "scheduling.k8s.io",
            "compositepodgroups",
            ["Name", "Policy", "Min-Group-Count", "Scheduled", "Age"],
            ["Workload", "Template", "Parent", "Topology", "Disruption"],
        ),
        ("resource.k8s.io", "resourceclaims", ["Name", "State", "Age"], []),
        ("resource.k8s.io", "resourceclaimtemplates", ["Name", "Age"], []),
        ("resource.k8s.io", "deviceclasses", ["Name", "Age"], []),
        ("resource.k8s.io", "resourceslices", ["Name", "Node", "Driver", "Pool", "Age"], []),
        ("example.com", "widgets", ["Name", "Age"], []),
    ],
)
def test_columns_follow_kube_printers(group: str, plural: str, normal: list[str], wide: list[str]) -> None:
    assert columns(group, plural) == (normal, wide)


@pytest.mark.parametrize("key", sorted(PRINTERS), ids=lambda k: f"{k[0] or 'core'}/{k[1]}")
def test_every_printer_fills_every_column_even_for_a_bare_object(key: tuple[str, str]) -> None:
    printer = PRINTERS[key]
    cells = printer.cells({"metadata": {"name": "bare"}}, NOW)
    assert len(cells) == len(printer.columns)
    assert "bare" in cells
    for col in printer.columns:
        assert set(col.definition()) == {"name", "type", "format", "description", "priority"}
        assert col.description


def test_name_column_is_format_name_with_object_meta_description() -> None:
    name = to_table("example.com", "widgets", [], NOW, "1")["columnDefinitions"][0]
    assert name == {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": NAME_DESCRIPTION,
        "priority": 0,
    }
    assert name["description"].startswith("Name must be unique within a namespace. ")


def test_default_printer_is_name_and_age() -> None:
    assert printer_for("example.com", "widgets") is printer_for("other.io", "things")
    assert row("example.com", "widgets", {"metadata": meta("w", age=3 * 3600)}) == {"Name": "w", "Age": "3h"}


def test_missing_creation_timestamp_prints_unknown_age() -> None:
    assert row("", "configmaps", {"metadata": {"name": "c"}})["Age"] == "<unknown>"


# ---------------------------------------------------------------------------------------------
# pods


def cstatus(name: str = "c", *, ready: bool = False, restarts: int = 0, **state: Any) -> dict[str, Any]:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": state}


RUNNING = {"running": {"startedAt": ago(100)}}


def pod(
    phase: str = "Running",
    statuses: list[dict[str, Any]] | None = None,
    init_statuses: list[dict[str, Any]] | None = None,
    containers: int = 1,
    init_containers: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    deleting: bool = False,
    reason: str = "",
) -> dict[str, Any]:
    m = meta("p")
    if deleting:
        m["deletionTimestamp"] = ago(1)
    status: dict[str, Any] = {"phase": phase}
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    if conditions is not None:
        status["conditions"] = conditions
    if reason:
        status["reason"] = reason
    spec = {"containers": [{"name": f"c{i}", "image": "nginx"} for i in range(containers)]}
    if init_containers is not None:
        spec["initContainers"] = init_containers
    return {"metadata": m, "spec": spec, "status": status}


INIT = [{"name": "init", "image": "busybox"}]


@pytest.mark.parametrize(
    ("obj", "status", "ready"),
    [
        pytest.param(pod("Pending"), "Pending", "0/1", id="pending-no-statuses"),
        pytest.param(pod(statuses=[cstatus(ready=True, **RUNNING)]), "Running", "1/1", id="running-ready"),
        pytest.param(pod(statuses=[cstatus(**RUNNING)]), "Running", "0/1", id="running-not-ready"),
        pytest.param(
            pod("Pending", [cstatus(waiting={"reason": "ContainerCreating"})]),
            "ContainerCreating",
            "0/1",
            id="creating",
        ),
        pytest.param(
            pod(statuses=[cstatus(waiting={"reason": "CrashLoopBackOff"}, restarts=4)]),
            "CrashLoopBackOff",
            "0/1",
            id="crashloop",
        ),
        pytest.param(
            pod(
                "Pending",
                [cstatus(waiting={"reason": "PodInitializing"})],
                [cstatus("init", running={})],
                1,
                INIT,
            ),
            "Init:0/1",
            "0/1",
            id="init-running",
        ),
        pytest.param(
            pod(
                "Pending",
                [],
                [cstatus("a", terminated={"exitCode": 0, "reason": "Completed"}), cstatus("b", running={})],
                1,
                [{"name": "a"}, {"name": "b"}],
            ),
            "Init:1/2",
            "0/1",
            id="second-init-running",
        ),
        pytest.param(
            pod("Pending", [], [cstatus("init", waiting={"reason": "CrashLoopBackOff"})], 1, INIT),
            "Init:CrashLoopBackOff",
            "0/1",
            id="init-crashloop",
        ),
        pytest.param(
            pod("Pending", [], [cstatus("init", terminated={"exitCode": 3})], 1, INIT),
            "Init:ExitCode:3",
            "0/1",
            id="init-exit-code",
        ),
        pytest.param(
            pod("Pending", [], [cstatus("init", terminated={"exitCode": 1, "signal": 9})], 1, INIT),
            "Init:Signal:9",
            "0/1",
            id="init-signal",
        ),
        pytest.param(
            pod("Pending", [], [cstatus("init", terminated={"exitCode": 1, "reason": "Error"})], 1, INIT),
            "Init:Error",
            "0/1",
            id="init-error-reason",
        ),
        pytest.param(
            pod(
                statuses=[cstatus(ready=True, **RUNNING)],
                init_statuses=[cstatus("init", terminated={"exitCode": 0, "reason": "Completed"})],
                init_containers=INIT,
            ),
            "Running",
            "1/1",
            id="init-done",
        ),
        pytest.param(
            pod(
                statuses=[cstatus(ready=True, **RUNNING)],
                init_statuses=[cstatus("side", ready=True, **RUNNING) | {"started": True}],
                init_containers=[{"name": "side", "restartPolicy": "Always"}],
            ),
            "Running",
            "2/2",
            id="sidecar-counts-as-container",
        ),
        pytest.param(
            pod(
                "Pending",
                [cstatus(waiting={"reason": "PodInitializing"})],
                [cstatus("side", **RUNNING) | {"started": False}],
                init_containers=[{"name": "side", "restartPolicy": "Always"}],
            ),
            "Init:0/1",
            "0/2",
            id="sidecar-not-started-yet",
        ),
        pytest.param(
            pod("Succeeded", [cstatus(terminated={"exitCode": 0, "reason": "Completed"})]),
            "Completed",
            "0/1",
            id="completed",
        ),
        pytest.param(
            pod(
                statuses=[
                    cstatus("a", terminated={"exitCode": 0, "reason": "Completed"}),
                    cstatus("b", ready=True, **RUNNING),
                ],
                containers=2,
                conditions=[{"type": "Ready", "status": "True"}],
            ),
            "Running",
            "1/2",
            id="completed-sibling-still-running-ready",
        ),
        pytest.param(
            pod(
                statuses=[
                    cstatus("a", terminated={"exitCode": 0, "reason": "Completed"}),
                    cstatus("b", ready=True, **RUNNING),
                ],
                containers=2,
                conditions=[{"type": "Ready", "status": "False"}],
            ),
            "NotReady",
            "1/2",
            id="completed-sibling-running-not-ready",
        ),
        pytest.param(
            pod("Failed", [cstatus(terminated={"exitCode": 137})]), "ExitCode:137", "0/1", id="exit-code"
        ),
        pytest.param(
            pod("Failed", [cstatus(terminated={"exitCode": 0, "signal": 15})]),
            "Signal:15",
            "0/1",
            id="signal",
        ),
        pytest.param(pod("Failed", reason="Evicted"), "Evicted", "0/1", id="status-reason"),
        pytest.param(
            pod(
                "Pending",
                conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
            ),
            "SchedulingGated",
            "0/1",
            id="scheduling-gated",
        ),
        pytest.param(
            pod(statuses=[cstatus(ready=True, **RUNNING)], deleting=True),
            "Terminating",
            "1/1",
            id="terminating",
        ),
        pytest.param(
            pod("Succeeded", [cstatus(terminated={"exitCode": 0, "reason": "Completed"})], deleting=True),
            "Completed",
            "0/1",
            id="terminal-pod-being-deleted-keeps-status",
        ),
        pytest.param(pod(deleting=True, reason="NodeLost"), "Unknown", "0/1", id="node-lost"),
    ],
)
def test_pod_status_and_ready(obj: dict[str, Any], status: str, ready: str) -> None:
    cells = row("", "pods", obj)
    assert (cells["Status"], cells["Ready"]) == (status, ready)


@pytest.mark.parametrize(
    ("statuses", "want"),
    [
        pytest.param([cstatus(**RUNNING)], "0", id="no-restarts"),
        pytest.param([cstatus(restarts=2, **RUNNING)], "2", id="restarts-without-last-state"),
        pytest.param(
            [
                cstatus(restarts=3, **RUNNING)
                | {"lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(62)}}}
            ],
            "3 (62s ago)",
            id="restarts-with-last-termination",
        ),
        pytest.param(
            [
                cstatus("a", restarts=1, **RUNNING)
                | {"lastState": {"terminated": {"finishedAt": ago(7200)}}},
                cstatus("b", restarts=2, **RUNNING) | {"lastState": {"terminated": {"finishedAt": ago(300)}}},
            ],
            "3 (5m ago)",
            id="latest-termination-wins",
        ),
    ],
)
def test_pod_restarts(statuses: list[dict[str, Any]], want: str) -> None:
    assert row("", "pods", pod(statuses=statuses, containers=len(statuses)))["Restarts"] == want


def test_pod_init_restarts_count_only_while_initializing() -> None:
    obj = pod(
        "Pending",
        [cstatus(restarts=9, waiting={"reason": "PodInitializing"})],
        [cstatus("init", restarts=4, waiting={"reason": "CrashLoopBackOff"})],
        1,
        INIT,
    )
    assert pod_status_summary(obj)[3] == 4


def test_pod_wide_cells() -> None:
    obj = pod(
        statuses=[cstatus(ready=True, **RUNNING)], conditions=[{"type": "example.com/a", "status": "True"}]
    )
    obj["spec"]["nodeName"] = "node-1"
    obj["spec"]["readinessGates"] = [{"conditionType": "example.com/a"}, {"conditionType": "example.com/b"}]
    obj["status"]["podIPs"] = [{"ip": "10.0.0.7"}, {"ip": "fd00::7"}]
    obj["status"]["nominatedNodeName"] = "node-2"
    cells = row("", "pods", obj)
    assert [cells["IP"], cells["Node"], cells["Nominated Node"], cells["Readiness Gates"]] == [
        "10.0.0.7",
        "node-1",
        "node-2",
        "1/2",
    ]
    bare = row("", "pods", pod("Pending"))
    assert [bare["IP"], bare["Node"], bare["Nominated Node"], bare["Readiness Gates"]] == ["<none>"] * 4


@pytest.mark.parametrize(
    ("phase", "conditions"),
    [
        ("Running", None),
        (
            "Succeeded",
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "The pod has completed successfully.",
                }
            ],
        ),
        (
            "Failed",
            [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
        ),
    ],
)
def test_finished_pods_carry_row_conditions(phase: str, conditions: list[dict[str, str]] | None) -> None:
    r = to_table("", "pods", [pod(phase)], NOW, "1")["rows"][0]
    assert r.get("conditions") == conditions


# ---------------------------------------------------------------------------------------------
# nodes


def node(
    labels: dict[str, str] | None = None, ready: str | None = "True", unschedulable: bool = False
) -> dict[str, Any]:
    status: dict[str, Any] = {"nodeInfo": {"kubeletVersion": "v1.37.0"}}
    if ready is not None:
        status["conditions"] = [
            {"type": "MemoryPressure", "status": "False"},
            {"type": "Ready", "status": ready},
        ]
    return {
        "metadata": meta("n1", labels=labels or {}),
        "spec": {"unschedulable": unschedulable},
        "status": status,
    }


@pytest.mark.parametrize(
    ("obj", "status", "roles"),
    [
        pytest.param(node(), "Ready", "<none>", id="ready-no-roles"),
        pytest.param(node(ready="False"), "NotReady", "<none>", id="not-ready"),
        pytest.param(node(ready="Unknown"), "NotReady", "<none>", id="ready-unknown"),
        pytest.param(node(ready=None), "Unknown", "<none>", id="no-ready-condition"),
        pytest.param(node(unschedulable=True), "Ready,SchedulingDisabled", "<none>", id="cordoned"),
        pytest.param(
            node({"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": ""}),
            "Ready",
            "control-plane,worker",
            id="role-labels-sorted",
        ),
        pytest.param(
            node({"kubernetes.io/role": "gpu", "node-role.kubernetes.io/": ""}),
            "Ready",
            "gpu",
            id="legacy-role",
        ),
    ],
)
def test_node_status_and_roles(obj: dict[str, Any], status: str, roles: str) -> None:
    cells = row("", "nodes", obj)
    assert (cells["Status"], cells["Roles"], cells["Version"]) == (status, roles, "v1.37.0")


def test_node_wide_cells() -> None:
    obj = node()
    obj["status"]["addresses"] = [
        {"type": "Hostname", "address": "n1"},
        {"type": "InternalIP", "address": "10.1.0.1"},
    ]
    obj["status"]["nodeInfo"] |= {
        "osImage": "Ubuntu",
        "kernelVersion": "6.8",
        "containerRuntimeVersion": "fake://1",
    }
    cells = row("", "nodes", obj)
    assert [
        cells[c] for c in ("Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime")
    ] == [
        "10.1.0.1",
        "<none>",
        "Ubuntu",
        "6.8",
        "fake://1",
    ]
    assert row("", "nodes", node())["OS-Image"] == "<unknown>"


# ---------------------------------------------------------------------------------------------
# scheduling.k8s.io


def podgroup(
    policy: dict[str, Any], conditions: list[dict[str, Any]] | None = None, **spec: Any
) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": meta("web", age=90), "spec": {"schedulingPolicy": policy, **spec}}
    if conditions is not None:
        obj["status"] = {"conditions": conditions}
    return obj


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(
            podgroup({"gang": {"minCount": 3}}),
            {"Policy": "Gang", "Min-Count": 3, "Scheduled": "<none>"},
            id="gang-not-yet-tried",
        ),
        pytest.param(
            podgroup({"gang": {"minCount": 3}}, [{"type": "PodGroupInitiallyScheduled", "status": "True"}]),
            {"Policy": "Gang", "Min-Count": 3, "Scheduled": "True"},
            id="gang-scheduled",
        ),
        pytest.param(
            podgroup(
                {"gang": {"minCount": 2}},
                [
                    {"type": "DisruptionTarget", "status": "True"},
                    {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable"},
                ],
            ),
            {"Policy": "Gang", "Min-Count": 2, "Scheduled": "False"},
            id="gang-unschedulable",
        ),
        pytest.param(
            podgroup({"basic": {}}, [{"type": "PodGroupInitiallyScheduled", "status": "Unknown"}]),
            {"Policy": "Basic", "Min-Count": "<none>", "Scheduled": "Unknown"},
            id="basic",
        ),
        pytest.param(
            podgroup({}), {"Policy": "<none>", "Min-Count": "<none>", "Scheduled": "<none>"}, id="no-policy"
        ),
    ],
)
def test_podgroup_policy_min_count_and_scheduled_condition(obj: dict[str, Any], want: dict[str, Any]) -> None:
    cells = row("scheduling.k8s.io", "podgroups", obj)
    assert {k: cells[k] for k in want} == want
    assert cells["Age"] == "90s"


def test_podgroup_wide_cells() -> None:
    obj = podgroup(
        {"gang": {"minCount": 3}},
        workloadRef={"workloadName": "web", "templateName": "web"},
        schedulingConstraints={"topology": [{"key": "topology.kubernetes.io/rack"}]},
        disruptionMode={"all": {}},
    )
    cells = row("scheduling.k8s.io", "podgroups", obj)
    assert [cells["Workload"], cells["Template"], cells["Topology"], cells["Disruption"]] == [
        "web",
        "web",
        "topology.kubernetes.io/rack",
        "All",
    ]
    bare = row("scheduling.k8s.io", "podgroups", podgroup({"basic": {}}, disruptionMode={"single": {}}))
    assert [bare["Workload"], bare["Template"], bare["Topology"], bare["Disruption"]] == [
        "<none>",
        "<none>",
        "<none>",
        "Single",
    ]


@pytest.mark.parametrize(
    ("spec", "controller", "templates"),
    [
        pytest.param(
            {
                "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "web"},
                "podGroupTemplates": [{"name": "web"}],
            },
            "StatefulSet/web",
            "web",
            id="statefulset-owned",
        ),
        pytest.param({"podGroupTemplates": [{"name": "a"}, {"name": "b"}]}, "<none>", "a,b", id="standalone"),
        pytest.param({"compositePodGroupTemplates": [{"name": "root"}]}, "<none>", "root", id="composite"),
        pytest.param({}, "<none>", "<none>", id="empty"),
    ],
)
def test_workload_controller_and_templates(spec: dict[str, Any], controller: str, templates: str) -> None:
    cells = row("scheduling.k8s.io", "workloads", {"metadata": meta("wl"), "spec": spec})
    assert (cells["Controller"], cells["Templates"]) == (controller, templates)


def test_compositepodgroup_cells() -> None:
    obj = {
        "metadata": meta("cpg"),
        "spec": {
            "workloadRef": {"workloadName": "job", "templateName": "root"},
            "parentCompositePodGroupName": "top",
            "schedulingPolicy": {"gang": {"minGroupCount": 2}},
        },
        "status": {"conditions": [{"type": "CompositePodGroupInitiallyScheduled", "status": "True"}]},
    }
    cells = row("scheduling.k8s.io", "compositepodgroups", obj)
    assert [
        cells[c] for c in ("Policy", "Min-Group-Count", "Scheduled", "Workload", "Template", "Parent")
    ] == [
        "Gang",
        2,
        "True",
        "job",
        "root",
        "top",
    ]


def test_priorityclass_cells() -> None:
    obj = {"metadata": meta("high"), "value": 1000, "globalDefault": False, "preemptionPolicy": "Never"}
    assert list(row("scheduling.k8s.io", "priorityclasses", obj).values()) == [
        "high",
        1000,
        False,
        "30s",
        "Never",
    ]


# ---------------------------------------------------------------------------------------------
# apps, batch


def template(*containers: tuple[str, str]) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": n, "image": i} for n, i in containers]}}


def test_statefulset_ready_and_wide() -> None:
    obj = {
        "metadata": meta("web"),
        "spec": {"replicas": 3, "template": template(("nginx", "nginx:1"), ("side", "busybox"))},
        "status": {"readyReplicas": 2},
    }
    assert list(row("apps", "statefulsets", obj).values()) == [
        "web",
        "2/3",
        "30s",
        "nginx,side",
        "nginx:1,busybox",
    ]
    assert row("apps", "statefulsets", {"metadata": meta("d"), "spec": {}})["Ready"] == "0/1"


def test_deployment_and_replicaset_cells() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
    }
    dep = {
        "metadata": meta("web"),
        "spec": {"replicas": 2, "selector": selector, "template": template(("c", "img"))},
        "status": {"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1},
    }
    assert list(row("apps", "deployments", dep).values()) == [
        "web",
        "1/2",
        2,
        1,
        "30s",
        "c",
        "img",
        "app=web,tier in (a,b)",
    ]
    rs = {
        "metadata": meta("web-1"),
        "spec": {"replicas": 2, "selector": {}, "template": template(("c", "img"))},
        "status": {"replicas": 2, "readyReplicas": 2},
    }
    assert list(row("apps", "replicasets", rs).values()) == ["web-1", 2, 2, 2, "30s", "c", "img", "<none>"]


def test_daemonset_cells() -> None:
    ds = {
        "metadata": meta("agent"),
        "spec": {
            "selector": {
                "matchExpressions": [
                    {"key": "gone", "operator": "DoesNotExist"},
                    {"key": "app", "operator": "Exists"},
                ]
            },
            "template": {
                "spec": {"nodeSelector": {"os": "linux"}, "containers": [{"name": "a", "image": "i"}]}
            },
        },
        "status": {
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 3,
            "numberReady": 2,
            "updatedNumberScheduled": 3,
            "numberAvailable": 2,
        },
    }
    assert list(row("apps", "daemonsets", ds).values()) == [
        "agent",
        3,
        3,
        2,
        3,
        2,
        "os=linux",
        "30s",
        "a",
        "i",
        "app,!gone",
    ]


@pytest.mark.parametrize(
    ("owner", "want"),
    [
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True},
            "statefulset.apps/web",
            id="apps",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": True}, "pod/p", id="core"
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}, "<none>", id="not-controller"
        ),
    ],
)
def test_controllerrevision_controller(owner: dict[str, Any], want: str) -> None:
    obj = {"metadata": meta("web-5d8f", ownerReferences=[owner]), "revision": 2}
    assert list(row("apps", "controllerrevisions", obj).values()) == ["web-5d8f", want, 2, "30s"]


@pytest.mark.parametrize(
    ("spec", "status", "meta_extra", "want_status", "completions", "duration"),
    [
        pytest.param(
            {"completions": 3},
            {"succeeded": 1, "startTime": ago(65)},
            {},
            "Running",
            "1/3",
            "65s",
            id="running",
        ),
        pytest.param(
            {"completions": 1},
            {
                "succeeded": 1,
                "startTime": ago(600),
                "completionTime": ago(540),
                "conditions": [{"type": "Complete", "status": "True"}],
            },
            {},
            "Complete",
            "1/1",
            "60s",
            id="complete",
        ),
        pytest.param({"parallelism": 4}, {}, {}, "Running", "0/1 of 4", "", id="work-queue"),
        pytest.param(
            {}, {"conditions": [{"type": "Failed", "status": "True"}]}, {}, "Failed", "0/1", "", id="failed"
        ),
        pytest.param({}, {}, {"deletionTimestamp": ago(1)}, "Terminating", "0/1", "", id="terminating"),
        pytest.param(
            {},
            {"conditions": [{"type": "Suspended", "status": "True"}]},
            {},
            "Suspended",
            "0/1",
            "",
            id="suspended",
        ),
    ],
)
def test_job_cells(
    spec: dict[str, Any],
    status: dict[str, Any],
    meta_extra: dict[str, Any],
    want_status: str,
    completions: str,
    duration: str,
) -> None:
    cells = row("batch", "jobs", {"metadata": meta("j", **meta_extra), "spec": spec, "status": status})
    assert (cells["Status"], cells["Completions"], cells["Duration"]) == (want_status, completions, duration)


def test_cronjob_cells() -> None:
    obj = {
        "metadata": meta("nightly"),
        "spec": {
            "schedule": "0 0 * * *",
            "suspend": False,
            "jobTemplate": {"spec": {"template": template(("c", "i"))}},
        },
        "status": {"active": [{"name": "nightly-1"}], "lastScheduleTime": ago(3600)},
    }
    assert list(row("batch", "cronjobs", obj).values()) == [
        "nightly",
        "0 0 * * *",
        "<none>",
        "False",
        1,
        "60m",
        "30s",
        "c",
        "i",
        "<none>",
    ]


# ---------------------------------------------------------------------------------------------
# core odds and ends


@pytest.mark.parametrize(
    ("spec", "status", "want"),
    [
        pytest.param(
            {
                "type": "ClusterIP",
                "clusterIPs": ["10.96.0.10"],
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
                "selector": {"k8s-app": "dns"},
            },
            {},
            ["ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "k8s-app=dns"],
            id="cluster-ip",
        ),
        pytest.param(
            {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"], "ports": [{"port": 80}]},
            {},
            ["ClusterIP", "None", "<none>", "80/TCP", "<none>"],
            id="headless",
        ),
        pytest.param(
            {
                "type": "NodePort",
                "clusterIPs": ["10.96.0.2"],
                "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
                "externalIPs": ["1.2.3.4"],
            },
            {},
            ["NodePort", "10.96.0.2", "1.2.3.4", "80:30080/TCP", "<none>"],
            id="node-port",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIPs": ["10.96.0.3"]},
            {},
            ["LoadBalancer", "10.96.0.3", "<pending>", "<none>", "<none>"],
            id="lb-pending",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIPs": ["10.96.0.3"]},
            {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example.com"}]}},
            ["LoadBalancer", "10.96.0.3", "5.6.7.8,lb.example.com", "<none>", "<none>"],
            id="lb-ready",
        ),
        pytest.param(
            {"type": "ExternalName", "externalName": "db.example.com"},
            {},
            ["ExternalName", "<none>", "db.example.com", "<none>", "<none>"],
            id="external-name",
        ),
    ],
)
def test_service_cells(spec: dict[str, Any], status: dict[str, Any], want: list[str]) -> None:
    cells = row("", "services", {"metadata": meta("svc"), "spec": spec, "status": status})
    assert [cells[c] for c in ("Type", "Cluster-IP", "External-IP", "Port(s)", "Selector")] == want


@pytest.mark.parametrize(
    ("subsets", "want"),
    [
        pytest.param([], "<none>", id="none"),
        pytest.param([{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}], "10.0.0.1:80", id="one"),
        pytest.param(
            [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}],
            "10.0.0.1,10.0.0.2",
            id="headless-no-ports",
        ),
        pytest.param(
            [{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 443}]}], "[fd00::1]:443", id="ipv6"
        ),
        pytest.param(
            [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 6)], "ports": [{"port": 80}]}],
            "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...",
            id="more",
        ),
    ],
)
def test_endpoints_cells(subsets: list[dict[str, Any]], want: str) -> None:
    assert row("", "endpoints", {"metadata": meta("svc"), "subsets": subsets})["Endpoints"] == want


@pytest.mark.parametrize(
    ("plural", "obj", "want"),
    [
        pytest.param(
            "namespaces",
            {"metadata": meta("ns"), "status": {"phase": "Terminating"}},
            ["ns", "Terminating", "30s"],
            id="namespace",
        ),
        pytest.param(
            "configmaps",
            {"metadata": meta("cm"), "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}},
            ["cm", 3, "30s"],
            id="configmap",
        ),
        pytest.param(
            "secrets",
            {"metadata": meta("s"), "type": "Opaque", "data": {"a": "MQ=="}},
            ["s", "Opaque", 1, "30s"],
            id="secret",
        ),
        pytest.param(
            "serviceaccounts", {"metadata": meta("default")}, ["default", 0, "30s"], id="serviceaccount"
        ),
        pytest.param(
            "limitranges",
            {"metadata": {"name": "lr", "creationTimestamp": "2026-03-01T11:00:00Z"}},
            ["lr", "2026-03-01T11:00:00Z"],
            id="limitrange-created-at",
        ),
        pytest.param(
            "resourcequotas",
            {
                "metadata": meta("q"),
                "status": {
                    "hard": {"pods": "10", "limits.cpu": "4", "requests.cpu": "2", "limits.memory": "1Gi"},
                    "used": {"pods": "3", "requests.cpu": "500m"},
                },
            },
            ["q", "pods: 3/10, requests.cpu: 500m/2", "limits.cpu: 0/4, limits.memory: 0/1Gi", "30s"],
            id="resourcequota",
        ),
    ],
)
def test_core_cells(plural: str, obj: dict[str, Any], want: list[Any]) -> None:
    assert list(row("", plural, obj).values()) == want


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(
            {
                "metadata": meta("data-web-0"),
                "spec": {"storageClassName": "standard", "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Pending"},
            },
            ["data-web-0", "Pending", "", "", "", "standard", "<unset>", "30s", "<unset>"],
            id="pending",
        ),
        pytest.param(
            {
                "metadata": meta(
                    "data-web-0", annotations={"volume.beta.kubernetes.io/storage-class": "beta"}
                ),
                "spec": {"storageClassName": "standard", "volumeName": "pv-1", "volumeMode": "Filesystem"},
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
                    "capacity": {"storage": "2Gi"},
                },
            },
            ["data-web-0", "Bound", "pv-1", "2Gi", "RWO,RWX", "beta", "<unset>", "30s", "Filesystem"],
            id="bound",
        ),
        pytest.param(
            {
                "metadata": meta("gone", deletionTimestamp=ago(1)),
                "spec": {"volumeName": "pv-2"},
                "status": {"phase": "Bound"},
            },
            ["gone", "Terminating", "pv-2", "0", "", "", "<unset>", "30s", "<unset>"],
            id="terminating",
        ),
    ],
)
def test_pvc_cells(obj: dict[str, Any], want: list[Any]) -> None:
    assert list(row("", "persistentvolumeclaims", obj).values()) == want


def test_pv_cells() -> None:
    obj = {
        "metadata": meta("pv-1"),
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOncePod"],
            "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": "default", "name": "data-web-0"},
            "storageClassName": "fast",
        },
        "status": {"phase": "Bound"},
    }
    assert list(row("", "persistentvolumes", obj).values()) == [
        "pv-1", "5Gi", "RWOP", "Retain", "Bound", "default/data-web-0", "fast", "<unset>", "", "30s", "<unset>"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("group", "obj", "want"),
    [
        pytest.param(
            "",
            {
                "metadata": meta("web.1"),
                "type": "Normal",
                "reason": "SuccessfulCreate",
                "message": "create Pod web-0 in StatefulSet web successful\n",
                "involvedObject": {"kind": "StatefulSet", "name": "web"},
                "source": {"component": "statefulset-controller"},
                "firstTimestamp": ago(300),
                "lastTimestamp": ago(20),
                "count": 2,
            },
            [
                "20s",
                "Normal",
                "SuccessfulCreate",
                "statefulset/web",
                "",
                "statefulset-controller",
                "create Pod web-0 in StatefulSet web successful",
                "5m",
                2,
                "web.1",
            ],
            id="core-classic",
        ),
        pytest.param(
            "",
            {
                "metadata": meta("pg.1"),
                "type": "Warning",
                "reason": "FailedScheduling",
                "message": "0/3 nodes are available",
                "involvedObject": {"kind": "Pod", "name": "web-0", "fieldPath": "spec"},
                "eventTime": "2026-03-01T11:59:00.000000Z",
                "reportingComponent": "default-scheduler",
                "reportingInstance": "default-scheduler-gangplane",
            },
            [
                "60s",
                "Warning",
                "FailedScheduling",
                "pod/web-0",
                "spec",
                "default-scheduler, default-scheduler-gangplane",
                "0/3 nodes are available",
                "60s",
                1,
                "pg.1",
            ],
            id="core-event-time-only",
        ),
        pytest.param(
            "events.k8s.io",
            {
                "metadata": meta("wl.1"),
                "type": "Normal",
                "reason": "WorkloadCreated",
                "note": "Created Workload web",
                "regarding": {"kind": "StatefulSet", "name": "web"},
                "eventTime": "2026-03-01T11:50:00.000000Z",
                "series": {"count": 4, "lastObservedTime": "2026-03-01T11:59:30.000000Z"},
                "reportingController": "statefulset-controller",
            },
            [
                "30s",
                "Normal",
                "WorkloadCreated",
                "statefulset/web",
                "",
                "statefulset-controller",
                "Created Workload web",
                "10m",
                4,
                "wl.1",
            ],
            id="events-v1-series",
        ),
    ],
)
def test_event_cells(group: str, obj: dict[str, Any], want: list[Any]) -> None:
    assert list(row(group, "events", obj).values()) == want


def test_lease_and_pdb_cells() -> None:
    lease = {"metadata": meta("kube-scheduler"), "spec": {"holderIdentity": "gangplane_1"}}
    assert list(row("coordination.k8s.io", "leases", lease).values()) == [
        "kube-scheduler",
        "gangplane_1",
        "30s",
    ]
    pdb = {"metadata": meta("web"), "spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 1}}
    assert list(row("policy", "poddisruptionbudgets", pdb).values()) == ["web", "2", "N/A", 1, "30s"]
    pdb2 = {"metadata": meta("web"), "spec": {"maxUnavailable": "25%"}}
    assert list(row("policy", "poddisruptionbudgets", pdb2).values()) == ["web", "N/A", "25%", 0, "30s"]


@pytest.mark.parametrize(
    ("extra_meta", "status", "want"),
    [
        pytest.param({}, {}, "pending", id="pending"),
        pytest.param({}, {"allocation": {"devices": {}}}, "allocated", id="allocated"),
        pytest.param(
            {},
            {"allocation": {}, "reservedFor": [{"resource": "pods", "name": "p"}]},
            "allocated,reserved",
            id="reserved",
        ),
        pytest.param({"deletionTimestamp": ago(1)}, {}, "deleted", id="deleted-unallocated"),
        pytest.param(
            {"deletionTimestamp": ago(1)},
            {"allocation": {}, "reservedFor": [{}]},
            "deleted,allocated,reserved",
            id="deleted-reserved",
        ),
    ],
)
def test_resourceclaim_state(extra_meta: dict[str, Any], status: dict[str, Any], want: str) -> None:
    obj = {"metadata": meta("claim", **extra_meta), "status": status}
    assert row("resource.k8s.io", "resourceclaims", obj)["State"] == want


def test_resourceslice_cells() -> None:
    obj = {
        "metadata": meta("node-1-gpu"),
        "spec": {"nodeName": "node-1", "driver": "gpu.example.com", "pool": {"name": "node-1"}},
    }
    assert list(row("resource.k8s.io", "resourceslices", obj).values()) == [
        "node-1-gpu",
        "node-1",
        "gpu.example.com",
        "node-1",
        "30s",
    ]


# ---------------------------------------------------------------------------------------------
# the Table envelope and negotiation


def test_table_envelope_with_partial_object_metadata() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta("cm", labels={"a": "b"}, resourceVersion="5"),
        "data": {"k": "v"},
    }
    table = to_table("", "configmaps", [obj], NOW, "1007", continue_token="tok")
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "1007", "continue": "tok"}
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"],
    }
    assert "continue" not in to_table("", "configmaps", [], NOW, "1")["metadata"]


@pytest.mark.parametrize(
    ("include", "want"),
    [
        ("Object", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}),
        ("None", None),
    ],
)
def test_include_object_variants(include: str, want: dict[str, Any] | None) -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    r = to_table("", "configmaps", [obj], NOW, "1", include_object=include)["rows"][0]
    assert r.get("object") == want
    assert ("object" in r) == (want is not None)


def test_v1beta1_table() -> None:
    table = to_table("", "configmaps", [{"metadata": {"name": "cm"}}], NOW, "1", table_version="v1beta1")
    assert table["apiVersion"] == "meta.k8s.io/v1beta1"
    assert table["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"


def test_empty_list_has_columns_and_no_rows() -> None:
    table = to_table("apps", "statefulsets", [], NOW, "3")
    assert table["rows"] == [] and len(table["columnDefinitions"]) == 5


def test_unknown_include_object_is_bad_request() -> None:
    with pytest.raises(StatusError) as e:
        to_table("", "pods", [], NOW, "1", include_object="Everything")
    assert (e.value.code, e.value.reason) == (400, "BadRequest")


KUBECTL_GET_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        (KUBECTL_GET_ACCEPT, "v1"),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", "v1beta1"),
        ("application/json;g=meta.k8s.io;v=v1;as=Table", "v1"),
        (
            "application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5,application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            "v1beta1",
        ),
        (
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            "v1beta1",
        ),
        ("application/json", None),
        ("application/json;as=Table;v=v1;g=meta.k8s.io;q=0", None),
        ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", None),
        ("*/*", None),
        ("", None),
    ],
)
def test_table_accept(accept: str, version: str | None) -> None:
    assert table_version(accept) == version
    assert table_accept(accept) is (version is not None)


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ({}, "Metadata"),
        ({"includeObject": "Object"}, "Object"),
        ({"includeObject": ["None", "Object"]}, "None"),
        ({"includeObject": ""}, "Metadata"),
        ("limit=500&includeObject=Object", "Object"),
        ("?includeObject=None", "None"),
        ("watch=true", "Metadata"),
    ],
)
def test_include_object_param(query: Any, want: str) -> None:
    assert include_object_param(query) == want


def test_include_object_param_rejects_unknown() -> None:
    with pytest.raises(StatusError) as e:
        include_object_param({"includeObject": "Everything"})
    assert e.value.code == 400
    assert e.value.message == 'unrecognized includeObject value: "Everything"'


def test_naive_now_is_treated_as_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    table = to_table("", "configmaps", [{"metadata": meta("c", age=182)}], naive, "1")
    assert table["rows"][0]["cells"][-1] == "3m2s"
