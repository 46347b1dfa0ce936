"""Micro-benchmarks of the in-process parts of a cold start (pytest-benchmark).

The ``cold-start`` scenarios time ``gangplane serve`` from exec to ``/readyz``; these isolate
what runs after the imports, so a change to one of them is visible without the noise of
process start-up: building the API server (registry, admission chain, bootstrap objects),
reading the embedded default fleet, and bringing every default component up in-process until
the start returns (the node agent has registered the default fleet by then; the plane's
construction and its stop are outside that timing).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.client.interface import NODES

pytestmark = pytest.mark.benchmark


def test_control_plane_construction(benchmark: Any) -> None:
    from gangplane.controlplane import ControlPlane

    benchmark.pedantic(ControlPlane, rounds=10, warmup_rounds=1)


def test_default_fleet_parse(benchmark: Any) -> None:
    from controllers.fleet import default_fleet

    fleet = benchmark(default_fleet)
    assert fleet.nodes


def test_default_components_start(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    from gangplane.controlplane import ControlPlane, default_components

    planes: list[ControlPlane] = []

    def setup() -> tuple[tuple[ControlPlane, list[str]], dict[str, Any]]:
        # the previous round's plane stops here, outside the timing
        while planes:
            loop.run_until_complete(planes.pop().stop())
        cp = ControlPlane()
        planes.append(cp)
        return (cp, default_components(cp)), {}

    def start(cp: ControlPlane, names: list[str]) -> None:
        loop.run_until_complete(cp.start(names))

    benchmark.pedantic(start, setup=setup, rounds=5, warmup_rounds=1)
    nodes = loop.run_until_complete(planes[0].client("bench").list(NODES))
    assert nodes["items"]
    loop.run_until_complete(planes.pop().stop())
