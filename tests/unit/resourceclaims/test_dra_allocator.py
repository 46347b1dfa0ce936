"""resourceclaims.allocator: devices from ResourceSlices by class, selectors, count, mode, node reach."""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from resourceclaims.allocator import (
    AllocationError,
    Allocator,
    Inventory,
    allocated_devices,
    allocation_usable_on,
    node_selector_matches,
)

RACK = "topology.kubernetes.io/rack"


def gpu_slice(node: str, n: int = 2, model: str = "h100") -> Obj:
    return {
        "metadata": {"name": f"{node}-gpu.example.com"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {"model": {"string": model}, "index": {"int": i}},
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(n)
            ],
        },
    }


def rack_slice(rack: str) -> Obj:
    return {
        "metadata": {"name": f"{rack}-shared"},
        "spec": {
            "driver": "shared-accelerator.example.com",
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": RACK, "operator": "In", "values": [rack]}]}
                ]
            },
            "pool": {"name": rack, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "accel-0", "attributes": {"rack": {"string": rack}}}],
        },
    }


def dclass(name: str, driver: str) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


CLASSES = {
    "gpu.example.com": dclass("gpu.example.com", "gpu.example.com"),
    "shared-accelerator.example.com": dclass(
        "shared-accelerator.example.com", "shared-accelerator.example.com"
    ),
}
INVENTORY_SLICES = [gpu_slice("n1"), gpu_slice("n2", model="a100"), rack_slice("r1"), rack_slice("r2")]
LABELS = {"n1": {RACK: "r1"}, "n2": {RACK: "r2"}}


def claim(*requests: Obj, constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"metadata": {"name": "c"}, "spec": {"devices": devices}}


def exact(
    name: str, cls: str = "gpu.example.com", count: int = 1, mode: str = "ExactCount", *sel: str
) -> Obj:
    e: Obj = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        e["count"] = count
    if sel:
        e["selectors"] = [{"cel": {"expression": s}} for s in sel]
    return {"name": name, "exactly": e}


def alloc(c: Obj, node: str = "n1", taken: set | None = None) -> Obj:
    return Allocator(Inventory.from_slices(INVENTORY_SLICES), CLASSES).allocate(
        c, node, LABELS.get(node, {}), taken or set()
    )


def results(a: Obj) -> list[tuple[str, str, str]]:
    return [(r["request"], r["pool"], r["device"]) for r in a["devices"]["results"]]


def test_node_local_device_pins_the_claim_to_the_node() -> None:
    a = alloc(claim(exact("gpu")))
    assert results(a) == [("gpu", "n1", "gpu-0")]
    assert a["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    assert allocation_usable_on(a, "n1", {}) and not allocation_usable_on(a, "n2", {})


def test_shared_device_is_usable_from_its_rack() -> None:
    a = alloc(claim(exact("device", "shared-accelerator.example.com")))
    assert results(a) == [("device", "r1", "accel-0")]
    assert allocation_usable_on(a, "other-node-in-r1", {RACK: "r1"})
    assert not allocation_usable_on(a, "n2", {RACK: "r2"})


def test_count_all_and_taken_devices() -> None:
    assert results(alloc(claim(exact("gpu", count=2)))) == [("gpu", "n1", "gpu-0"), ("gpu", "n1", "gpu-1")]
    assert results(alloc(claim(exact("gpu", mode="All")))) == [("gpu", "n1", "gpu-0"), ("gpu", "n1", "gpu-1")]
    a = alloc(claim(exact("gpu")), taken={("gpu.example.com", "n1", "gpu-0")})
    assert results(a) == [("gpu", "n1", "gpu-1")]
    with pytest.raises(AllocationError) as e:
        alloc(claim(exact("gpu", count=3)))
    assert e.value.request == "gpu" and "needs 3 device(s), 2 of 2 matching are free" in str(e.value)
    with pytest.raises(AllocationError, match="some matching devices are already allocated"):
        alloc(claim(exact("gpu", mode="All")), taken={("gpu.example.com", "n1", "gpu-0")})


def test_selectors_use_typed_attributes() -> None:
    sel = 'device.attributes["gpu.example.com"].model == "a100"'
    assert results(alloc(claim(exact("gpu", "gpu.example.com", 1, "ExactCount", sel)), node="n2")) == [
        ("gpu", "n2", "gpu-0")
    ]
    with pytest.raises(AllocationError) as e:
        alloc(claim(exact("gpu", "gpu.example.com", 1, "ExactCount", sel)), node="n1")
    assert str(e.value) == (
        'claim "c", request "gpu": no device of class "gpu.example.com" matching the selectors is reachable from the node'
    )
    cap = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0'
    assert len(results(alloc(claim(exact("gpu", "gpu.example.com", 2, "ExactCount", cap))))) == 2


def test_runtime_error_is_reported_when_nothing_matches() -> None:
    bad = 'device.attributes["gpu.example.com"].nope == 1'
    with pytest.raises(AllocationError, match="CEL runtime error: no such key: nope"):
        alloc(claim(exact("gpu", "gpu.example.com", 1, "ExactCount", bad)))


def test_first_available_falls_back_in_order() -> None:
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 4},
            {
                "name": "small",
                "deviceClassName": "gpu.example.com",
                "allocationMode": "ExactCount",
                "count": 1,
            },
        ],
    }
    assert results(alloc(claim(req))) == [("gpu/small", "n1", "gpu-0")]


def test_constraints_backtrack() -> None:
    c = claim(
        exact("a", "gpu.example.com", 1, "ExactCount", 'device.attributes["gpu.example.com"].index == 0'),
        exact("b"),
        constraints=[{"requests": ["a", "b"], "distinctAttribute": "gpu.example.com/index"}],
    )
    assert results(alloc(c)) == [("a", "n1", "gpu-0"), ("b", "n1", "gpu-1")]


def test_missing_class_names_the_request() -> None:
    with pytest.raises(AllocationError) as e:
        alloc(claim(exact("x", "nope.example.com")))
    assert e.value.request == "x" and 'device class "nope.example.com" does not exist' in str(e.value)


def test_class_config_is_copied_into_the_result() -> None:
    classes = dict(CLASSES)
    classes["gpu.example.com"] = {
        **classes["gpu.example.com"],
        "spec": {
            **classes["gpu.example.com"]["spec"],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}],
        },
    }
    a = Allocator(Inventory.from_slices(INVENTORY_SLICES), classes).allocate(
        claim(exact("gpu")), "n1", {}, set()
    )
    assert a["devices"]["config"] == [
        {
            "source": "FromClass",
            "requests": ["gpu"],
            "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}},
        }
    ]


def test_helpers() -> None:
    held = {"status": {"allocation": {"devices": {"results": [{"driver": "d", "pool": "p", "device": "x"}]}}}}
    assert allocated_devices([held, {}]) == {("d", "p", "x")}
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["a"]}]}]}
    assert node_selector_matches(sel, "n", {"k": "b"}) and not node_selector_matches(sel, "n", {"k": "a"})
