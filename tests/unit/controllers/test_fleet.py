"""Fleet files: the default cluster's shape, expansion and templating, and clear errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from apiserver.quantity import parse_quantity
from controllers.fleet import (
    DEFAULT_FLEET_YAML,
    HOSTNAME_LABEL,
    INSTANCE_TYPE_LABEL,
    RACK_LABEL,
    ZONE_LABEL,
    Fleet,
    default_fleet,
    load_fleet,
    parse_fleet,
)


def test_default_fleet_has_zones_racks_and_gpu_hosts() -> None:
    fleet = default_fleet()
    gpu = [n for n in fleet if "nvidia.com/gpu" in n.capacity]
    cpu = [n for n in fleet if "nvidia.com/gpu" not in n.capacity]
    assert len(gpu) == 16 and len(cpu) == 6
    assert Counter(n.labels[ZONE_LABEL] for n in fleet) == {"zone-a": 11, "zone-b": 11}
    racks = Counter(n.labels[RACK_LABEL] for n in gpu)
    assert racks == {"zone-a-rack-0": 4, "zone-a-rack-1": 4, "zone-b-rack-0": 4, "zone-b-rack-1": 4}
    for n in fleet:
        assert n.labels[HOSTNAME_LABEL] == n.name
        assert n.labels["kubernetes.io/os"] == "linux" and n.labels["kubernetes.io/arch"] == "amd64"
        assert n.labels[INSTANCE_TYPE_LABEL] in ("gpu-8x", "cpu-16x")
        assert n.allocatable == n.capacity
    assert all(n.capacity["nvidia.com/gpu"] == "8" for n in gpu)
    assert all(not n.devices for n in cpu)
    assert {(d.driver, len(d.names)) for n in gpu for d in n.devices} == {("gpu.example.com", 8)}
    assert [(r.rack, r.driver, r.names) for r in fleet.rack_devices] == [
        (rack, "shared-accelerator.example.com", ("accel-0",)) for rack in sorted(racks)
    ]
    assert [dc.name for dc in fleet.device_classes] == ["gpu.example.com", "shared-accelerator.example.com"]


def test_default_fleet_runs_every_kep_story() -> None:
    """Story 1: 5 x (4 cpu, 8Gi); stories 2 and 3: 8 x 1 GPU inside one rack; zone-local 3-pod gangs."""
    fleet = default_fleet()

    def fits(nodes: list[Any], pods: int, req: dict[str, str]) -> bool:
        slots = 0
        for n in nodes:
            per = min(
                int(parse_quantity(n.capacity.get(k, "0")) // parse_quantity(v)) for k, v in req.items()
            )
            slots += min(per, int(n.capacity["pods"]))
        return slots >= pods

    cpu_nodes = [n for n in fleet if "nvidia.com/gpu" not in n.capacity]
    assert fits(cpu_nodes, 5, {"cpu": "4", "memory": "8Gi"})
    for rack in {n.labels.get(RACK_LABEL) for n in fleet} - {None}:
        assert fits([n for n in fleet if n.labels.get(RACK_LABEL) == rack], 8, {"nvidia.com/gpu": "1"})
    for zone in ("zone-a", "zone-b"):
        assert fits([n for n in cpu_nodes if n.labels[ZONE_LABEL] == zone], 3, {"cpu": "1"})


def test_node_objects_are_registration_shaped() -> None:
    obj = default_fleet().node_objects()[0]
    assert obj["apiVersion"] == "v1" and obj["kind"] == "Node"
    assert obj["metadata"]["name"] == "gpu-zone-a-rack-0-0"
    assert obj["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert "conditions" not in obj["status"], "the agent posts conditions once it runs the node"


def test_expansion_order_and_template_variables() -> None:
    fleet = parse_fleet(
        {
            "nodes": [
                {
                    "name": "n-{zone}-{r}-{index}-{i}",
                    "zones": ["a", "b"],
                    "racksPerZone": 2,
                    "rackName": "rack-{zone}{r}",
                    "count": 2,
                    "labels": {"example.com/where": "{rack}"},
                    "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
                },
                {"name": "solo"},
            ]
        }
    )
    assert fleet.names()[:4] == ["n-a-0-0-0", "n-a-0-1-1", "n-a-1-0-2", "n-a-1-1-3"]
    assert len(fleet) == 9 and fleet.names()[-1] == "solo"
    n = fleet.get("n-b-1-1-7")
    assert n is not None and n.labels[RACK_LABEL] == "rack-b1" and n.labels["example.com/where"] == "rack-b1"
    assert n.taints == ({"key": "dedicated", "value": "ml", "effect": "NoSchedule"},)
    solo = fleet.get("solo")
    assert solo is not None and ZONE_LABEL not in solo.labels and solo.capacity == {}


def test_racks_without_zones_and_explicit_allocatable() -> None:
    fleet = parse_fleet(
        {
            "nodes": [
                {
                    "name": "r{r}-{index}",
                    "racksPerZone": 2,
                    "count": 1,
                    "capacity": {"cpu": "4"},
                    "allocatable": {"cpu": "3500m"},
                }
            ]
        }
    )
    assert [n.labels[RACK_LABEL] for n in fleet] == ["rack-0", "rack-1"]
    assert fleet.nodes[0].allocatable == {"cpu": "3500m"}


def test_empty_fleets() -> None:
    assert len(parse_fleet({"nodes": []})) == 0
    assert len(parse_fleet({"nodes": None})) == 0
    assert Fleet.empty().node_objects() == []


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "a fleet must be a mapping"),
        ({}, "nodes: required (use 'nodes: []' for an empty cluster)"),
        ({"nodes": [], "extra": 1}, "unknown field(s) extra"),
        ({"nodes": {"a": 1}}, "nodes: must be a list"),
        ({"kind": "Cluster", "nodes": []}, "kind: must be 'Fleet'"),
        ({"nodes": [{"count": 2}]}, "nodes[0].name: required"),
        ({"nodes": [{"name": "n", "count": 2}]}, "node name 'n' already used by nodes[0]"),
        ({"nodes": [{"name": "a"}, {"name": "a"}]}, "nodes[1].name: node name 'a' already used by nodes[0]"),
        ({"nodes": [{"name": "n-{index}", "count": -1}]}, "nodes[0].count: must be >= 0"),
        ({"nodes": [{"name": "n-{index}", "count": "3"}]}, "nodes[0].count: must be an integer"),
        ({"nodes": [{"name": "n-{foo}"}]}, "unknown template variable {foo}"),
        ({"nodes": [{"name": "n-{rack}"}]}, "template variable {rack} is not available here"),
        ({"nodes": [{"name": "N_1"}]}, "nodes[0].name: invalid value 'N_1'"),
        (
            {"nodes": [{"name": "n", "capacity": {"cpu": "lots"}}]},
            "nodes[0].capacity.cpu: invalid quantity 'lots'",
        ),
        (
            {"nodes": [{"name": "n", "capacity": {"cpu": "-1"}}]},
            "nodes[0].capacity.cpu: must be non-negative",
        ),
        (
            {"nodes": [{"name": "n", "capacity": {"pods": "1.5"}}]},
            "nodes[0].capacity.pods: must be a whole number",
        ),
        (
            {"nodes": [{"name": "n", "capacity": {"cpu": "1"}, "allocatable": {"cpu": "2"}}]},
            "exceeds capacity 1",
        ),
        (
            {"nodes": [{"name": "n", "allocatable": {"cpu": "2"}}]},
            "nodes[0].allocatable.cpu: not in capacity",
        ),
        (
            {"nodes": [{"name": "n", "taints": [{"key": "k", "effect": "Never"}]}]},
            "nodes[0].taints[0].effect: must be one of",
        ),
        ({"nodes": [{"name": "n", "labels": {"bad key!": "v"}}]}, "nodes[0].labels[bad key!]: invalid value"),
        ({"nodes": [{"name": "n", "zones": ["a", "a"]}]}, "nodes[0].zones: zones must be unique"),
        ({"nodes": [{"name": "n", "rackName": "r"}]}, "nodes[0].rackName: needs racksPerZone"),
        ({"nodes": [{"name": "n", "cpu": "4"}]}, "nodes[0]: unknown field(s) cpu"),
        ({"nodes": [{"name": "n", "devices": [{"count": 1}]}]}, "nodes[0].devices[0].driver: required"),
        (
            {"nodes": [{"name": "n", "devices": [{"driver": "d.example.com", "count": 2, "name": "dev"}]}]},
            "device names repeat on node n",
        ),
        ({"deviceClasses": [{"name": "Bad!"}], "nodes": []}, "deviceClasses[0].name: invalid value"),
    ],
)
def test_malformed_fleets_name_the_offending_path(doc: Any, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_fleet(doc)
    assert message in str(e.value)


def test_load_fleet_reads_yaml_and_prefixes_the_file(tmp_path: Path) -> None:
    good = tmp_path / "fleet.yaml"
    good.write_text("nodes:\n- name: w-{index}\n  count: 3\n  capacity: {cpu: '2', pods: '10'}\n")
    fleet = load_fleet(good)
    assert fleet.names() == ["w-0", "w-1", "w-2"] and fleet.source == str(good)
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes: [unclosed\n")
    with pytest.raises(ValueError, match="invalid YAML"):
        load_fleet(bad)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("nodes:\n- name: x\n  count: two\n")
    with pytest.raises(ValueError, match=r"^nodes\[0\].count: must be an integer, got 'two'$"):
        load_fleet(wrong)
    with pytest.raises(OSError):
        load_fleet(tmp_path / "missing.yaml")


def test_the_default_fleet_is_written_in_the_documented_format(tmp_path: Path) -> None:
    p = tmp_path / "default.yaml"
    p.write_text(DEFAULT_FLEET_YAML)
    assert load_fleet(p).names() == default_fleet().names()


def test_summary_groups_shapes() -> None:
    assert default_fleet().summary().startswith("16 × gpu-8x (cpu=96")
    assert Fleet.empty().summary() == "no nodes"


def test_rack_scoped_devices_publish_one_slice_per_rack() -> None:
    fleet = parse_fleet(
        {
            "nodes": [
                {
                    "name": "n-{rack}-{index}",
                    "racksPerZone": 2,
                    "count": 2,
                    "devices": [{"driver": "pool.example.com", "scope": "rack", "count": 2, "name": "p-{d}"}],
                }
            ]
        }
    )
    assert all(not n.devices for n in fleet)
    slices = fleet.rack_slice_objects()
    assert [s["metadata"]["name"] for s in slices] == ["rack-0-pool.example.com", "rack-1-pool.example.com"]
    assert [d["name"] for d in slices[0]["spec"]["devices"]] == ["p-0", "p-1"]
    assert slices[1]["spec"]["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [
        "rack-1"
    ]
    with pytest.raises(ValueError, match=r"nodes\[0\]\.devices\[0\]\.scope: rack needs racksPerZone"):
        parse_fleet(
            {"nodes": [{"name": "n-{index}", "devices": [{"driver": "d.example.com", "scope": "rack"}]}]}
        )
    with pytest.raises(ValueError, match=r"nodes\[0\]\.devices\[0\]\.scope: must be one of node, rack"):
        parse_fleet(
            {"nodes": [{"name": "n-{index}", "devices": [{"driver": "d.example.com", "scope": "zone"}]}]}
        )
