"""Micro-benchmarks of the in-process write path and the parts every write pays for.

    python -m pytest bench/micro/test_write_path.py

The end-to-end ones go through the in-process client (as the controllers do); the others time
one step of the registry's write on a stored-looking object: ObjectMeta validation on create
and update, the typed decoding check, the nesting limit of a patch result, the strategic merge
of a pod status patch, and ``metadata.managedFields`` on a create, on the scenario's label
patch of a ConfigMap and on the node agent's status patch of a bound pod.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
import pytest

from apiserver.client.interface import CONFIGMAPS, NODES, PODS
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.jsonpatch_merge import merge_patch
from apiserver.patch.limits import depth_exceeds
from apiserver.patch.strategic import strategic_merge
from apiserver.patch.typecheck import check_kind_types
from bench.workloads.api import configmap
from bench.workloads.common import node, pod

pytestmark = pytest.mark.benchmark

STATUS_PATCH = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
SMP = "application/strategic-merge-patch+json"


def _binding(name: str) -> dict[str, Any]:
    """What the scheduler posts to bind pod ``name`` to the bench's one node."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"kind": "Node", "name": "node-00000"},
    }


def _stored_pod(loop: asyncio.AbstractEventLoop, plane: Any) -> dict[str, Any]:
    c = plane.client("bench")
    loop.run_until_complete(c.create(NODES, node(0)))
    return dict(loop.run_until_complete(c.create(PODS, pod("p"), "default")))


def test_create_configmap_api_in_process_body(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    """One write of the api-in-process scenario's create phase."""
    c = plane.client("bench")
    n = itertools.count()
    benchmark(lambda: loop.run_until_complete(c.create(CONFIGMAPS, configmap(next(n), "default"))))


def test_merge_patch_configmap_labels(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    """The scenario's patch phase: a label on a ConfigMap, a new value each time."""
    c = plane.client("bench")
    loop.run_until_complete(c.create(CONFIGMAPS, configmap(0, "default")))
    n = itertools.count()

    def patch() -> None:
        body = {"metadata": {"labels": {"touched": str(next(n))}}}
        loop.run_until_complete(c.patch(CONFIGMAPS, "cm-0", body, "default"))

    benchmark(patch)


def test_pod_create_binding_status_mix(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    """What the scheduler and the node agent write per pod: create, bind, status Running."""
    c = plane.client("bench")
    loop.run_until_complete(c.create(NODES, node(0)))
    n = itertools.count()

    async def one() -> None:
        name = f"p-{next(n)}"
        await c.create(PODS, pod(name), "default")
        await c.create_subresource(PODS, name, "binding", _binding(name), "default")
        await c.patch(PODS, name, STATUS_PATCH, "default", subresource="status", patch_type=SMP)

    benchmark(lambda: loop.run_until_complete(one()))


def test_object_meta_validation_create_and_update(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    obj = _stored_pod(loop, plane)
    api = plane.client("bench").api
    rd = api.registry.get("", "v1", "pods")

    def validate() -> None:
        api.meta_validator(obj, rd)
        api.meta_update_validator(obj, obj, rd)

    benchmark(validate)


def test_typecheck_stored_pod(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    obj = _stored_pod(loop, plane)
    benchmark(lambda: check_kind_types("", "v1", "Pod", obj))


def test_nesting_limit_of_a_patched_pod(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    obj = _stored_pod(loop, plane)
    benchmark(lambda: depth_exceeds(obj))


def test_strategic_merge_pod_status_patch(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    """As the registry runs it: on its own fresh decoding of the stored pod."""
    raw = orjson.dumps(_stored_pod(loop, plane))
    node_ = schema.for_gvk("", "v1", "Pod")
    benchmark(lambda: strategic_merge(orjson.loads(raw), STATUS_PATCH, node_, copy_original=False))


def test_managed_fields_of_a_pod_create(benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any) -> None:
    obj = _stored_pod(loop, plane)
    obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    node_ = schema.for_gvk("", "v1", "Pod")
    benchmark(lambda: updated_managed_fields(None, obj, "bench", node_, "2026-01-01T00:00:00Z", "v1"))


def _time_update_tracking(benchmark: Any, old: Any, new: Any, kind: str, manager: str, sub: str = "") -> None:
    """Time the registry's managedFields step of one write of ``new`` over the stored ``old``."""
    node_ = schema.for_gvk("", "v1", kind)
    now = "2026-01-01T00:00:01Z"
    benchmark(lambda: updated_managed_fields(old, new, manager, node_, now, "v1", subresource=sub))


def test_managed_fields_of_a_configmap_label_patch(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    """The registry's managedFields step of the api-in-process scenario's patch phase."""
    c = plane.client("bench")
    old = dict(loop.run_until_complete(c.create(CONFIGMAPS, configmap(0, "default"))))
    new = merge_patch(orjson.loads(orjson.dumps(old)), {"metadata": {"labels": {"touched": "y"}}})
    _time_update_tracking(benchmark, old, new, "ConfigMap", "bench")


def test_managed_fields_of_a_pod_status_patch(
    benchmark: Any, loop: asyncio.AbstractEventLoop, plane: Any
) -> None:
    """The node agent's status patch (Running + Ready) of a bound pod, as the registry tracks it."""
    c = plane.client("bench")
    _stored_pod(loop, plane)
    loop.run_until_complete(c.create_subresource(PODS, "p", "binding", _binding("p"), "default"))
    old = dict(loop.run_until_complete(c.get(PODS, "p", "default")))
    smp = strategic_merge(orjson.loads(orjson.dumps(old)), STATUS_PATCH, schema.for_gvk("", "v1", "Pod"))
    _time_update_tracking(benchmark, old, smp, "Pod", "kubelet", "status")
