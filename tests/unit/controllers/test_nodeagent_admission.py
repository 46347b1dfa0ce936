"""Kubelet admission arithmetic of the node agent: requests, check order, messages, usage."""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from controllers.nodeagent.admission import (
    NodeUsage,
    Rejection,
    RequestMemo,
    allocatable_units,
    check_fit,
    is_extended_resource,
    pod_request_units,
)

ALLOC = {"cpu": 4000, "memory": 8 * 2**30, "pods": 10, "nvidia.com/gpu": 8}


def container(name: str, **requests: str) -> Obj:
    return {"name": name, "image": "busybox", "resources": {"requests": dict(requests)}}


def pod(*containers: Obj, init: list[Obj] | None = None, overhead: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}


REQUEST_CASES = pytest.mark.parametrize(
    ("name", "p", "want"),
    [
        ("sums regular containers", pod(container("a", cpu="1"), container("b", cpu="500m")), {"cpu": 1500}),
        ("memory in bytes", pod(container("a", memory="1Gi")), {"memory": 2**30}),
        (
            "a classic init container larger than the app wins",
            pod(container("a", cpu="1"), init=[container("i", cpu="3")]),
            {"cpu": 3000},
        ),
        (
            "a smaller init container does not add",
            pod(container("a", cpu="2"), init=[container("i", cpu="1")]),
            {"cpu": 2000},
        ),
        (
            "sidecars add to the steady state and to later init containers",
            pod(
                container("a", cpu="1"),
                init=[
                    {**container("side", cpu="1"), "restartPolicy": "Always"},
                    container("i", cpu="2"),
                ],
            ),
            {"cpu": 3000},
        ),
        (
            "extended resources are counted in units",
            pod(container("a", **{"nvidia.com/gpu": "2"})),
            {"nvidia.com/gpu": 2},
        ),
        ("overhead is added", pod(container("a", cpu="1"), overhead={"cpu": "250m"}), {"cpu": 1250}),
        ("no requests, no entries", pod(container("a")), {}),
        (
            "pod-level requests override the containers'",
            {
                **pod(container("a", cpu="1")),
                "spec": {**pod(container("a", cpu="1"))["spec"], "resources": {"requests": {"cpu": "3"}}},
            },
            {"cpu": 3000},
        ),
    ],
)


@REQUEST_CASES
def test_pod_request_units(name: str, p: Obj, want: dict[str, int]) -> None:
    assert pod_request_units(p) == want, name


@REQUEST_CASES
def test_the_request_memo_answers_as_the_arithmetic(name: str, p: Obj, want: dict[str, int]) -> None:
    memo = RequestMemo()
    first, again = memo.units(p), memo.units(p)
    assert first == again == pod_request_units(p) == want, name
    first["cpu"] = -1  # the caller's copy: the memo's own is not changed through it
    assert memo.units(p) == want, name


def test_the_request_memo_tells_shapes_apart() -> None:
    """Pods alike but for one request, a sidecar's restartPolicy or a non-map part get each their
    own answer; a NaN (written as ``null``) is never remembered."""
    memo = RequestMemo()
    side = {**container("side", cpu="1"), "restartPolicy": "Always"}
    plain = container("side", cpu="1")
    cases = [
        pod(container("a", cpu="1")),
        pod(container("a", cpu="2")),
        pod(container("a", cpu="1"), init=[side, container("i", cpu="2")]),
        pod(container("a", cpu="1"), init=[plain, container("i", cpu="2")]),
        pod(container("a", cpu="1"), overhead={"cpu": "100m"}),
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "resources": "junk"}]}},
        pod(container("a", cpu=float("nan"))),  # type: ignore[arg-type]
    ]
    for _ in range(2):
        for p in cases:
            assert memo.units(p) == pod_request_units(p)
    assert len(memo._known) == 6


def test_the_request_memo_is_bounded() -> None:
    memo = RequestMemo(limit=4)
    for i in range(10):
        assert memo.units(pod(container("a", cpu=f"{i + 1}m"))) == {"cpu": i + 1}
    assert len(memo._known) <= 4


def test_a_pod_that_fits_is_admitted() -> None:
    assert check_fit({"cpu": 2000}, {"cpu": 2000}, 1, ALLOC) is None


def test_cpu_shortage_reads_like_kubelet() -> None:
    rej = check_fit({"cpu": 4000}, {"cpu": 2000}, 1, ALLOC)
    assert rej == Rejection(
        "OutOfcpu", "Node didn't have enough resource: cpu, requested: 4000, used: 2000, capacity: 4000"
    )
    assert rej.status_message == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 2000, capacity: 4000"
    )


def test_memory_shortage() -> None:
    rej = check_fit({"memory": 2**30}, {"memory": 8 * 2**30}, 1, ALLOC)
    assert rej is not None and rej.reason == "OutOfmemory"
    assert rej.message.endswith(f"requested: {2**30}, used: {8 * 2**30}, capacity: {8 * 2**30}")


def test_the_pod_count_is_checked_first() -> None:
    rej = check_fit({"cpu": 9000}, {}, 10, ALLOC)
    assert rej == Rejection(
        "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 10, capacity: 10"
    )


def test_native_resources_are_checked_before_extended_ones() -> None:
    rej = check_fit({"nvidia.com/gpu": 9, "memory": 9 * 2**30}, {}, 0, ALLOC)
    assert rej is not None and rej.reason == "OutOfmemory"


def test_extended_resource_shortage() -> None:
    rej = check_fit({"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 6}, 3, ALLOC)
    assert rej == Rejection(
        "OutOfnvidia.com/gpu",
        "Node didn't have enough resource: nvidia.com/gpu, requested: 4, used: 6, capacity: 8",
    )


def test_an_extended_resource_the_node_does_not_advertise_is_refused_by_the_device_manager() -> None:
    rej = check_fit({"example.com/fpga": 1}, {}, 0, ALLOC)
    assert rej == Rejection(
        "UnexpectedAdmissionError",
        "Allocate failed due to can't allocate unregistered device example.com/fpga, which is unexpected",
    )


def test_a_native_resource_the_node_lacks_has_capacity_zero() -> None:
    rej = check_fit({"ephemeral-storage": 1}, {}, 0, ALLOC)
    assert rej is not None and rej.reason == "OutOfephemeral-storage"
    assert rej.message.endswith("capacity: 0")


def test_a_node_without_a_pods_allocatable_admits_nothing() -> None:
    rej = check_fit({}, {}, 0, {"cpu": 1000})
    assert rej is not None and rej.reason == "OutOfpods"


@pytest.mark.parametrize(
    ("name", "extended"),
    [
        ("nvidia.com/gpu", True),
        ("example.com/foo", True),
        ("cpu", False),
        ("hugepages-2Mi", False),
        ("kubernetes.io/something", False),
        ("requests.example.com/foo", False),
    ],
)
def test_is_extended_resource(name: str, extended: bool) -> None:
    assert is_extended_resource(name) is extended


def test_node_usage_is_incremental_and_idempotent() -> None:
    u = NodeUsage()
    u.admit("default/a", {"cpu": 1000, "memory": 100})
    u.admit("default/a", {"cpu": 1000, "memory": 100})  # twice: counted once
    u.admit("default/b", {"cpu": 500})
    assert u.used == {"cpu": 1500, "memory": 100} and len(u.pods) == 2
    assert u.check({"cpu": 3000}, ALLOC) is not None
    u.release("default/a", {"cpu": 1000, "memory": 100})
    u.release("default/a", {"cpu": 1000, "memory": 100})
    assert u.used == {"cpu": 500} and u.pods == {"default/b"}
    assert u.check({"cpu": 3000}, ALLOC) is None


def test_allocatable_units_fall_back_to_capacity_and_skip_garbage() -> None:
    node = {"status": {"capacity": {"cpu": "2", "memory": "1Ki", "pods": "5", "bad": "x"}}}
    assert allocatable_units(node) == {"cpu": 2000, "memory": 1024, "pods": 5}
