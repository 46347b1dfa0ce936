"""Fixtures of the micro-benchmarks: an event loop driven by hand and a fresh control plane."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


@pytest.fixture
def plane(loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    from gangplane.controlplane import ControlPlane

    cp = ControlPlane()
    yield cp
    loop.run_until_complete(cp.stop())
