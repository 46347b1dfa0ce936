"""Shared fixtures: an in-process control plane per test (no sockets, no sleeps)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.controlplane import ControlPlane, ControlPlaneOptions
from featuregates import FeatureGate


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
