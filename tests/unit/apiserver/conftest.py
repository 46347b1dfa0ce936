"""The in-process plane the API tests below this folder write through (a fake clock, stopped after)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.meta import FakeClock
from gangplane.controlplane import ControlPlane, ControlPlaneOptions


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    cp = ControlPlane(ControlPlaneOptions(clock=FakeClock()))
    try:
        yield cp
    finally:
        await cp.stop()
