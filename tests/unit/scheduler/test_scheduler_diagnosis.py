"""The FitError text, byte for byte as kube-scheduler writes it, and where its parts come from."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from scheduler import schedule_one
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import (
    Diagnosis,
    FitError,
    NodeToStatus,
    NoNodesAvailableError,
    fit_error_message,
    preemption_not_helpful,
)
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.status import Code, Status
from scheduler.testing import RecordingClient, make_node, make_pod, snapshot_of

GPU = "Insufficient nvidia.com/gpu"
AFF = "node(s) didn't match Pod's node affinity/selector"


def statuses(**reasons_by_node: list[str]) -> NodeToStatus:
    return NodeToStatus({n: Status(Code.UNSCHEDULABLE, *r) for n, r in reasons_by_node.items()})


@pytest.mark.parametrize(
    ("name", "num_nodes", "diagnosis", "want"),
    [
        (
            "histogram sorted as strings (28 before 4), preemption appended",
            32,
            Diagnosis(
                node_to_status=NodeToStatus(
                    {f"g{i}": Status(Code.UNSCHEDULABLE, GPU) for i in range(4)}
                    | {f"c{i}": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, AFF) for i in range(28)}
                ),
                post_filter_msg="preemption: 0/32 nodes are available: 32 Preemption is not helpful for scheduling.",
            ),
            "0/32 nodes are available: 28 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu."
            " preemption: 0/32 nodes are available: 32 Preemption is not helpful for scheduling.",
        ),
        (
            "every reason of a node counts",
            2,
            Diagnosis(
                node_to_status=statuses(a=["Insufficient cpu", "Insufficient memory"], b=["Insufficient cpu"])
            ),
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
        ),
        (
            "absent nodes take the absent status",
            5,
            Diagnosis(
                node_to_status=NodeToStatus(
                    {"a": Status(Code.UNSCHEDULABLE, "Insufficient cpu")},
                    Status(
                        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]"
                    ),
                )
            ),
            "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity].",
        ),
        (
            "a PreFilter rejection replaces the histogram",
            3,
            Diagnosis(
                node_to_status=NodeToStatus(
                    {}, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod affinity terms conflict")
                ),
                pre_filter_msg="pod affinity terms conflict",
            ),
            "0/3 nodes are available: pod affinity terms conflict.",
        ),
        ("nothing known", 0, Diagnosis(), "0/0 nodes are available:"),
    ],
)
def test_fit_error_message(name: str, num_nodes: int, diagnosis: Diagnosis, want: str) -> None:
    assert fit_error_message(num_nodes, diagnosis) == want
    assert str(FitError("ns/p", num_nodes, diagnosis)) == want


def test_preemption_not_helpful_counts_examined_nodes() -> None:
    examined = NodeToStatus(
        {"n0": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming pod")}
    )
    assert (
        preemption_not_helpful(3, examined)
        == "0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )


def test_no_nodes_available_message() -> None:
    assert str(NoNodesAvailableError()) == "no nodes available to schedule pods"


# --- the same messages produced by a real cycle --------------------------------------------------


def gpu_cluster() -> tuple[list[Obj], list[Obj]]:
    nodes = [
        make_node(
            f"n{i:02d}",
            labels={"gpu": "true"} if i < 4 else {},
            extra={"nvidia.com/gpu": "8"} if i < 4 else None,
        )
        for i in range(32)
    ]
    busy = [
        make_pod(f"trainer-{i}", node_name=f"n{i:02d}", requests={"nvidia.com/gpu": "8"}, priority=1000)
        for i in range(4)
    ]
    return nodes, busy


async def run_cycle(pod: Obj, nodes: list[Obj], pods: list[Obj], client: Any = None) -> tuple[str, Any]:
    snap = snapshot_of(nodes, pods)
    fw = Framework(
        default_profile(),
        Handle(snapshot=snap, client=client or RecordingClient()),
        registry=default_registry(),
    )
    state = CycleState()
    pi = PodInfo(pod)
    try:
        result = schedule_one.schedule_pod(fw, state, pi, snap)
    except FitError as e:
        post, s = await fw.run_post_filter_plugins(state, pi, e.diagnosis.node_to_status)
        e.diagnosis.post_filter_msg = s.message()
        return e.message, post
    return result.suggested_host, None


@pytest.mark.parametrize(
    ("name", "pod", "want"),
    [
        (
            "gpu pod, no lower-priority victims anywhere",
            make_pod("job", requests={"nvidia.com/gpu": "1"}, node_selector={"gpu": "true"}, priority=1000),
            "0/32 nodes are available: 28 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu."
            " preemption: 0/32 nodes are available: 28 Preemption is not helpful for scheduling,"
            " 4 No preemption victims found for incoming pod.",
        ),
        (
            "only unresolvable reasons: preemption is never tried",
            make_pod("job", requests={"nvidia.com/gpu": "9"}, node_selector={"gpu": "true"}, priority=1000),
            "0/32 nodes are available: 28 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu."
            " preemption: 0/32 nodes are available: 32 Preemption is not helpful for scheduling.",
        ),
        (
            "preemptionPolicy Never",
            make_pod(
                "job",
                requests={"nvidia.com/gpu": "1"},
                node_selector={"gpu": "true"},
                priority=2000,
                preemption_policy="Never",
            ),
            "0/32 nodes are available: 28 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu."
            " preemption: not eligible due to preemptionPolicy=Never.",
        ),
        (
            "conflicting node-name terms fail in PreFilter",
            make_pod(
                "job",
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": ["n00"]},
                                        {"key": "metadata.name", "operator": "In", "values": ["n01"]},
                                    ]
                                }
                            ]
                        }
                    }
                },
            ),
            "0/32 nodes are available: pod affinity terms conflict."
            " preemption: 0/32 nodes are available: 32 Preemption is not helpful for scheduling.",
        ),
    ],
)
@pytest.mark.anyio
async def test_cycle_fit_error_messages(name: str, pod: Obj, want: str) -> None:
    nodes, busy = gpu_cluster()
    msg, _ = await run_cycle(pod, nodes, busy)
    assert msg == want


@pytest.mark.anyio
async def test_successful_preemption_leaves_only_the_filter_histogram() -> None:
    nodes, busy = gpu_cluster()
    pod = make_pod("urgent", requests={"nvidia.com/gpu": "4"}, node_selector={"gpu": "true"}, priority=5000)
    msg, post = await run_cycle(pod, nodes, busy)
    assert msg == (
        "0/32 nodes are available: 28 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu."
    )
    assert post.nominated_node_name in {"n00", "n01", "n02", "n03"}
    assert [v["metadata"]["name"] for v in post.victims] == [f"trainer-{int(post.nominated_node_name[1:])}"]


@pytest.mark.anyio
async def test_narrowing_prefilter_reports_the_other_nodes_as_absent() -> None:
    nodes = [make_node(f"n{i}", cpu="1") for i in range(3)]
    pod = make_pod(
        "p",
        requests={"cpu": "2"},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                    ]
                }
            }
        },
    )
    msg, _ = await run_cycle(pod, nodes, [])
    assert msg.startswith(
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
