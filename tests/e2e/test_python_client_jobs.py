"""The official Python client (kubernetes 37) with Jobs: typed BatchV1Api create, watch until Complete.

The 1.37 models know ``JobSpec.scheduling`` and the Job status fields the controller writes, so the
typed client deserialises the finished Job (conditions, ``uncountedTerminatedPods``, counters).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace

pytestmark = pytest.mark.e2e

k8s = pytest.importorskip("kubernetes.client")
config = pytest.importorskip("kubernetes.config")
watch = pytest.importorskip("kubernetes.watch")


@pytest.fixture
def api_client(server: Server) -> Iterator[Any]:
    c = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield c
    c.close()


@pytest.fixture
def ns(api_client: Any, server: Server) -> Iterator[str]:
    name = "pyjob-" + uuid.uuid4().hex[:8]
    k8s.CoreV1Api(api_client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    yield name
    delete_namespace(server, name)


def test_typed_job_runs_to_complete(api_client: Any, ns: str) -> None:
    batch = k8s.BatchV1Api(api_client)
    job = k8s.V1Job(
        metadata=k8s.V1ObjectMeta(name="pi"),
        spec=k8s.V1JobSpec(
            completions=2,
            parallelism=2,
            completion_mode="Indexed",
            template=k8s.V1PodTemplateSpec(
                spec=k8s.V1PodSpec(
                    restart_policy="Never", containers=[k8s.V1Container(name="c", image="busybox")]
                )
            ),
        ),
    )
    created = batch.create_namespaced_job(ns, job)
    assert created.spec.selector.match_labels == {"batch.kubernetes.io/controller-uid": created.metadata.uid}
    w = watch.Watch()
    done = None
    for ev in w.stream(batch.list_namespaced_job, ns, field_selector="metadata.name=pi", timeout_seconds=60):
        conds = {c.type: c.status for c in ev["object"].status.conditions or []}
        if conds.get("Complete") == "True":
            done = ev["object"]
            w.stop()
    assert done is not None, "the Job did not complete within the watch"
    assert done.status.succeeded == 2 and done.status.completed_indexes == "0,1"
    assert done.status.completion_time is not None
    assert [c.type for c in done.status.conditions] == ["SuccessCriteriaMet", "Complete"]
