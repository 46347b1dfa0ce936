"""Shared fixtures: an in-process control plane per test (no sockets, no sleeps)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

# Informers share the store's objects read-only; every control plane a test stops checks that no
# component changed one in place (apiserver.server.localclient.ReadOnlyObjects).
os.environ.setdefault("GANGPLANE_CACHE_MUTATION_DETECTOR", "true")

from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def cp() -> AsyncIterator[ControlPlane]:
    plane = ControlPlane(
        ControlPlaneOptions(gates=FeatureGate(), bookmark_interval=0.5, client_bookmark_interval=0.2)
    )
    try:
        yield plane
    finally:
        await plane.stop()


@pytest.fixture
def client(cp: ControlPlane):  # noqa: ANN201
    return cp.client("test")
