"""The Workload a StatefulSet compiles to, compiled once per scheduling shape (KEP-6277 hook).

A new gang StatefulSet gets a Workload compiled from its ``spec.scheduling`` (KEP-6277 "Field
Mapping": :func:`statefulset_workload_item`, resolved and compiled by the workloadbuilder).
Sets stamped from one manifest — a thousand gangs of three — differ only in name and UID, yet
each paid the whole pipeline: the WorkloadItem, the resolution on a private copy of the
defaults, the compile, the Workload's copy.

What the compiled ``spec`` depends on is, besides the set's name (which only names the single
PodGroupTemplate), a pure function of:

* ``spec.scheduling`` as stored (its JSON bytes: equal bytes are equal content),
* the pod template's ``priorityClassName`` (copied to the template when it is a string),
* ``spec.replicas`` (the gang minCount default, :func:`min_count_from_replicas`),
* the two gates the item reads: ``DRAWorkloadResourceClaims`` and
  ``StatefulSetWorkloadUserMinCount``.

So :class:`WorkloadShapes` keeps, per such shape, the compiled spec of the first set that had it
and builds every later set's Workload around a copy of it, with the set's name as the template's
and the set's identity (name ``<set>-<hash(uid)>``, namespace, controller reference), exactly as
:func:`workload_for_spec` does for a fresh compile. Only successful compiles are kept: a shape
that fails to compile takes the general path every time, so its error and event are unchanged.
The memo belongs to one hook instance and holds at most :data:`MAX_SHAPES` shapes.
"""

from __future__ import annotations

import orjson

from apiserver.api.types import Obj
from apiserver.workloadbuilder import new_builder
from apiserver.workloadbuilder.builder import workload_for_spec
from apiserver.workloadbuilder.integration import scheduling_of
from apiserver.workloadbuilder.statefulset import (
    pod_spec_of,
    replicas_of,
    statefulset_build_options,
    statefulset_workload_item,
)
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, STATEFULSET_WORKLOAD_USER_MIN_COUNT, FeatureGate

#: how many shapes one hook keeps (a cluster has few manifests; the bound only stops growth)
MAX_SHAPES = 256

_Shape = tuple[bytes, str, int, bool, bool]


def compile_workload(sts: Obj, gates: FeatureGate) -> Obj:
    """The general path: the Workload ``sts`` compiles to, built from scratch (may raise BuildError)."""
    return new_builder(statefulset_workload_item(sts, gates), statefulset_build_options(sts)).build_workload()


class WorkloadShapes:
    """Compiled Workload specs per scheduling shape (see module docstring)."""

    def __init__(self, max_shapes: int = MAX_SHAPES) -> None:
        self.max_shapes = max_shapes
        #: shape -> the compiled spec's JSON bytes (a leaf template whose name is replaced per set)
        self._specs: dict[_Shape, bytes] = {}
        #: how many Workloads were built from a kept shape (tests and profiling)
        self.hits = 0

    @staticmethod
    def shape(sts: Obj, gates: FeatureGate) -> _Shape | None:
        """What the compiled spec depends on besides the set's name; None: not memoizable."""
        try:
            scheduling = orjson.dumps(scheduling_of(sts))
        except TypeError:
            return None  # not JSON (a set not from an API server): compile it every time
        priority_class = pod_spec_of(sts).get("priorityClassName")
        return (
            scheduling,
            priority_class if isinstance(priority_class, str) else "",
            replicas_of(sts),
            gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS),
            gates.enabled(STATEFULSET_WORKLOAD_USER_MIN_COUNT),
        )

    def workload(self, sts: Obj, gates: FeatureGate) -> Obj:
        """The Workload :func:`compile_workload` returns for ``sts``, from the kept shape when there
        is one. Raises BuildError as the general path does."""
        name = str((sts.get("metadata") or {}).get("name") or "")
        key = self.shape(sts, gates) if name else None
        kept = self._specs.get(key) if key is not None else None
        if kept is not None:
            spec = orjson.loads(kept)
            spec["podGroupTemplates"][0]["name"] = name
            self.hits += 1
            return workload_for_spec(spec, statefulset_build_options(sts))
        wl = compile_workload(sts, gates)
        if key is not None:
            self._keep(key, name, wl)
        return wl

    def _keep(self, key: _Shape, name: str, wl: Obj) -> None:
        """Keep ``wl``'s spec for ``key`` when it is the single leaf template named ``name``."""
        spec = {k: v for k, v in (wl.get("spec") or {}).items() if k != "controllerRef"}
        templates = spec.get("podGroupTemplates")
        if list(spec) != ["podGroupTemplates"] or not isinstance(templates, list) or len(templates) != 1:
            return
        if templates[0].get("name") != name:
            return
        if len(self._specs) >= self.max_shapes:
            self._specs.clear()
        self._specs[key] = orjson.dumps(spec)

    def __len__(self) -> int:
        return len(self._specs)
