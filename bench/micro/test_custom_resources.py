"""Micro-benchmarks of custom resources (pytest-benchmark): what a CR write and read cost beyond a
built-in object's (schema pruning, defaulting, validation, CEL rules, read-side decoding), and how
long a CRD takes from create to served.

    python -m pytest bench/micro/test_custom_resources.py --benchmark-only
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from apiserver.client.interface import CONFIGMAPS
from tests.crd_support import CRDS, CRONTABS, crontab, crontab_crd

pytestmark = pytest.mark.benchmark


def test_create_custom_resource_with_schema_and_cel(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    c = plane.client("bench")
    loop.run_until_complete(c.create(CRDS, crontab_crd()))
    n = itertools.count()

    def create() -> None:
        loop.run_until_complete(
            c.create(CRONTABS, crontab(f"ct-{next(n)}", ports=[{"name": "p", "port": 1}]), "default")
        )

    benchmark(create)


def test_update_custom_resource_with_transition_rules(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    c = plane.client("bench")
    loop.run_until_complete(c.create(CRDS, crontab_crd()))
    loop.run_until_complete(c.create(CRONTABS, crontab("ct"), "default"))
    n = itertools.count()

    def patch() -> None:
        loop.run_until_complete(c.patch(CRONTABS, "ct", {"spec": {"image": f"cron:{next(n)}"}}, "default"))

    benchmark(patch)


def test_list_1000_custom_resources(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    c = plane.client("bench")
    loop.run_until_complete(c.create(CRDS, crontab_crd()))
    for i in range(1000):
        loop.run_until_complete(c.create(CRONTABS, crontab(f"ct-{i}"), "default"))
    benchmark(lambda: loop.run_until_complete(c.list(CRONTABS, "default")))


def test_list_1000_configmaps_for_comparison(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    c = plane.client("bench")
    for i in range(1000):
        loop.run_until_complete(
            c.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i}"}, "data": {"k": "v"}}, "default")
        )
    benchmark(lambda: loop.run_until_complete(c.list(CONFIGMAPS, "default")))


def test_crd_create_to_served_and_delete(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    c = plane.client("bench")

    async def cycle() -> None:
        await c.create(CRDS, crontab_crd())
        await c.create(CRONTABS, crontab("first"), "default")  # served: no 404
        await c.delete(CRDS, "crontabs.stable.example.com")

    benchmark(lambda: loop.run_until_complete(cycle()))
