"""Nodes without host ports share one empty ``HostPortInfo`` (``NO_HOST_PORTS``); a node that
takes a pod with host ports gets its own, and ``NodeInfo.clone`` copies only those.

Random histories of pods with and without host ports added to and removed from NodeInfos and
their clones (each clone then changed on its own, as the snapshot's assumes change its copy):
every NodeInfo's used ports equal those of a NodeInfo built afresh from its pods, a NodeInfo
holds the shared instance exactly while none of its pods asks for a host port, no two hold the
same changeable one, and the shared empty instance stays empty.
"""

from __future__ import annotations

import random

import pytest

from scheduler.nodeinfo import NO_HOST_PORTS, HostPortInfo, NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod


def _ports(hp: HostPortInfo) -> dict[str, dict[tuple[str, int], int]]:
    return {ip: dict(m) for ip, m in hp._by_ip.items()}


def _fresh(ni: NodeInfo) -> dict[str, dict[tuple[str, int], int]]:
    return _ports(NodeInfo(ni.node, list(ni.pods)).used_ports)


@pytest.mark.parametrize("seed", range(20))
def test_used_ports_follow_pods_through_clones(seed: int) -> None:
    rng = random.Random(seed)
    infos = [NodeInfo(make_node("n"))]
    assert infos[0].used_ports is NO_HOST_PORTS
    shared = 0
    for step in range(200):
        ni = rng.choice(infos)
        op = rng.random()
        if op < 0.45:
            ports = [rng.choice([80, 443, 8080])] if rng.random() < 0.2 else []
            ni.add_pod_info(PodInfo(make_pod(f"p{step}", uid=f"u{step}", host_ports=ports)))
        elif op < 0.75 and ni.pods:
            ni.remove_pod(rng.choice(ni.pods).key)
        elif len(infos) < 12:
            infos.append(ni.clone())
        for each in infos:
            assert _ports(each.used_ports) == _fresh(each), step
            # shared exactly while none of the node's pods asks for a host port
            assert (each.used_ports is NO_HOST_PORTS) == (not any(p.host_ports for p in each.pods)), step
        owned = [each.used_ports for each in infos if each.used_ports is not NO_HOST_PORTS]
        assert len({id(hp) for hp in owned}) == len(owned), step  # no two NodeInfos share a changeable one
        shared += sum(1 for each in infos if each.used_ports is NO_HOST_PORTS)
        assert not _ports(NO_HOST_PORTS)
    assert shared > 100  # nodes without host ports did share the empty instance


def test_the_shared_empty_instance_refuses_a_port() -> None:
    with pytest.raises(TypeError):
        NO_HOST_PORTS.add("", "TCP", 80)
    assert NO_HOST_PORTS.clone() is NO_HOST_PORTS
    ni = NodeInfo(make_node("n"))
    ni.add_pod_info(PodInfo(make_pod("a", host_ports=[80])))
    assert ni.used_ports is not NO_HOST_PORTS and ni.used_ports.conflicts("", "TCP", 80)
    assert not len(NO_HOST_PORTS)
