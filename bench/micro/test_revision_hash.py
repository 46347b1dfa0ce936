"""Micro-benchmark of a new StatefulSet revision's name hash (pytest-benchmark).

A creating sync names its ControllerRevision ``<set>-<FNV-1 of the revision's bytes>``. Sets made
from one manifest differ in their template's labels, so each new set's revision is new; the
controller's :class:`~controllers.revisionhash.RevisionHasher` finishes the pod spec's share of the
hash from a table kept per pod spec content. These time 100 sets' hashes both ways, for the bench's
small template (``gangs-1000x3``) and for a template of a usual size (three containers with
probes, env and volume mounts).
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from bench.workloads.statefulsets import statefulset
from controllers import history
from controllers.revisionhash import RevisionHasher
from controllers.statefulset import utils as su

pytestmark = pytest.mark.benchmark


def _usual(name: str) -> Obj:
    sts = statefulset(name, 3, True, "")
    containers = []
    for i in range(3):
        containers.append(
            {
                "name": f"c{i}",
                "image": f"registry.example.com/team/app-{i}:1.2.{i}",
                "args": ["--port=8080", f"--id={i}", "--log-level=info"],
                "env": [{"name": f"VAR_{k}", "value": f"value-{k}"} for k in range(6)],
                "ports": [{"name": "http", "containerPort": 8080 + i, "protocol": "TCP"}],
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080 + i}, "periodSeconds": 5},
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }
        )
    sts["spec"]["template"]["spec"]["containers"] = containers
    sts["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    return sts


def _datas(make: Any) -> list[Obj]:
    return [su.revision_data(make(f"g{i}")) for i in range(100)]


@pytest.mark.parametrize("size", ["bench", "usual"])
@pytest.mark.parametrize("how", ["general", "hasher"])
def test_revision_hash_of_100_sets_from_one_manifest(benchmark: Any, size: str, how: str) -> None:
    datas = _datas((lambda n: statefulset(n, 3, True, "")) if size == "bench" else _usual)
    hasher = RevisionHasher()
    hasher.hash(datas[0], 0)  # the pod spec's table, built once per content

    def run() -> None:
        if how == "general":
            for d in datas:
                history.hash_revision(d, 0)
        else:
            for d in datas:
                hasher.hash(d, 0)

    benchmark(run)
    assert [hasher.hash(d, 0) for d in datas] == [history.hash_revision(d, 0) for d in datas]
