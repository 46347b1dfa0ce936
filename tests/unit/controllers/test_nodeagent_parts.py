"""The node agent's small parts: durations and annotations, status shapes, addresses, the timer heap."""

from __future__ import annotations

import pytest

from apiserver.meta import FakeClock
from controllers.nodeagent import pod_annotations as ann
from controllers.nodeagent.ipam import CIDRAllocator, PodIPPool, node_internal_ip, prefix_for_pods
from controllers.nodeagent.status import (
    container_id,
    image_id,
    merge_pod_conditions,
    node_conditions,
    node_needs_status,
    node_resources,
    normalize_image,
)
from controllers.nodeagent.timers import TimerHeap

# ============================================================================ durations & annotations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("5s", 5),
        ("250ms", 0.25),
        ("1m30s", 90),
        ("1.5h", 5400),
        ("2", 2),
        ("0", 0),
        (" 3s ", 3),
        ("1h2m3s4ms", 3723.004),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert ann.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "-1s", "5x", "s", "1s2", "abc", "1 s"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        ann.parse_duration(text)


def test_annotations_are_read_leniently_and_reported() -> None:
    pod = {"metadata": {"annotations": {ann.READY_AFTER: "soon", ann.CRASH: "yes", ann.NEVER_READY: "TRUE"}}}
    assert ann.duration(pod, ann.READY_AFTER) is None
    assert ann.flag(pod, ann.NEVER_READY) and not ann.flag(pod, ann.CRASH)
    msgs = ann.invalid_annotations(pod)
    assert msgs == [
        'annotation gangplane.dev/ready-after="soon" is not a duration such as "5s" or "1m30s"; ignored',
        'annotation gangplane.dev/crash="yes" must be "true" or "false"; ignored',
    ]
    assert ann.invalid_annotations({"metadata": {}}) == []


# ============================================================================ status shapes


@pytest.mark.parametrize(
    ("image", "want"),
    [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.27", "docker.io/library/nginx:1.27"),
        ("my-org/app:v1", "docker.io/my-org/app:v1"),
        ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
        ("localhost:5000/x", "localhost:5000/x:latest"),
        ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
    ],
)
def test_normalize_image(image: str, want: str) -> None:
    assert normalize_image(image) == want


def test_ids_are_stable_and_change_per_restart() -> None:
    assert image_id("nginx:1.27") == image_id("docker.io/library/nginx:1.27")
    assert image_id("nginx@sha256:abc") == "docker.io/library/nginx@sha256:abc"
    assert container_id("u", "c", 0) == container_id("u", "c", 0) != container_id("u", "c", 1)


def test_pod_conditions_keep_foreign_ones_and_unchanged_transition_times() -> None:
    old = [
        {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": "T0"},
        {"type": "Ready", "status": "False", "lastTransitionTime": "T1"},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": "T2"},
    ]
    new = [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]
    out = merge_pod_conditions(old, new, 1_800_000_000)
    assert [c["type"] for c in out] == ["DisruptionTarget", "Ready", "PodScheduled"]
    assert out[1]["lastTransitionTime"] == "2027-01-15T08:00:00Z" and out[2]["lastTransitionTime"] == "T2"


def test_node_resources_fill_kubelet_defaults_and_keep_explicit_allocatable() -> None:
    cap, alloc = node_resources(
        {"status": {"capacity": {"cpu": "4", "nvidia.com/gpu": "2"}, "allocatable": {"cpu": "3500m"}}}
    )
    assert cap == {
        "cpu": "4",
        "nvidia.com/gpu": "2",
        "memory": "128Gi",
        "pods": "110",
        "ephemeral-storage": "500Gi",
    }
    assert alloc["cpu"] == "3500m" and alloc["nvidia.com/gpu"] == "2" and alloc["pods"] == "110"


def test_node_conditions_heartbeat_and_needs_status() -> None:
    first = node_conditions([], 1000)
    later = node_conditions(first, 2000)
    by = {c["type"]: c for c in later}
    assert by["Ready"]["lastHeartbeatTime"] != first[-1]["lastHeartbeatTime"]
    assert by["Ready"]["lastTransitionTime"] == first[-1]["lastTransitionTime"]
    assert by["NetworkUnavailable"]["lastHeartbeatTime"] == first[0]["lastHeartbeatTime"], (
        "owned by the network plugin"
    )
    node = {
        "status": {"conditions": later, "nodeInfo": {"x": 1}, "addresses": [{}], "allocatable": {"cpu": "1"}}
    }
    assert not node_needs_status(node)
    later[-1] = {**later[-1], "status": "Unknown"}  # the node lifecycle controller gave up on us
    assert node_needs_status(node)


# ============================================================================ addresses


def test_addresses_are_deterministic() -> None:
    assert node_internal_ip(0) == "172.16.0.2" and node_internal_ip(254) == "172.16.1.0"
    assert prefix_for_pods(110) == 24 and prefix_for_pods(253) == 24 and prefix_for_pods(254) == 23
    a = CIDRAllocator()
    assert [a.allocate() for _ in range(3)] == ["10.128.0.0/24", "10.128.1.0/24", "10.128.2.0/24"]
    assert a.allocate(22) == "10.128.4.0/22", "aligned"
    assert a.occupy("10.128.3.0/24")
    assert a.allocate() == "10.128.8.0/24"
    a.release("10.128.1.0/24")
    assert a.allocate() == "10.128.1.0/24", "lowest free block first"


def test_pod_ips_go_round_robin_and_skip_taken_ones() -> None:
    pool = PodIPPool("10.128.0.0/30")  # .2 only: network, gateway .1, broadcast .3
    assert pool.size == 1
    assert pool.allocate() == "10.128.0.2" and pool.allocate() is None
    pool = PodIPPool("10.128.0.0/24")
    pool.reserve("10.128.0.3")
    assert [pool.allocate(), pool.allocate()] == ["10.128.0.4", "10.128.0.5"]
    pool.release("10.128.0.4")
    assert pool.allocate() == "10.128.0.6", "a freed IP is not reused at once"


# ============================================================================ timers


def test_timer_heap_fires_in_order_keeps_earliest_and_skips_cancelled() -> None:
    clock = FakeClock()
    fired: list[str] = []
    heap: TimerHeap[str] = TimerHeap(clock, fired.append)
    heap.schedule("a", 5)
    heap.schedule("b", 2)
    heap.schedule("a", 9)  # later: the earlier deadline stays
    heap.schedule("c", 3)
    heap.cancel("c")
    assert heap.fire_due() == 0
    clock.step(2)
    assert heap.fire_due() == 1 and fired == ["b"]
    clock.step(10)
    heap.fire_due()
    assert fired == ["b", "a"] and len(heap) == 0 and heap.next_due() is None
    heap.schedule("d", 20)
    heap.schedule("d", 15)
    assert heap.due_at("d") == 15 and heap.next_due() == 15
