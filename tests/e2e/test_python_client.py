"""The official Python client (kubernetes 37) against ``gangplane serve``: typed API, dynamic client, watch.

The typed 37 models are pydantic (``extra="forbid"``) and have no ``StatefulSetSpec.scheduling``, so
the KEP-6277 field is exercised through the dynamic client, which passes unknown fields through.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace

pytestmark = pytest.mark.e2e

k8s = pytest.importorskip("kubernetes.client")
config = pytest.importorskip("kubernetes.config")
dynamic = pytest.importorskip("kubernetes.dynamic")
watch = pytest.importorskip("kubernetes.watch")
ApiException = k8s.exceptions.ApiException


@pytest.fixture
def api_client(server: Server) -> Iterator[Any]:
    c = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield c
    c.close()


@pytest.fixture
def ns(api_client: Any, server: Server) -> Iterator[str]:
    name = "py-" + uuid.uuid4().hex[:8]
    k8s.CoreV1Api(api_client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    yield name
    delete_namespace(server, name)


def _sts(name: str, replicas: int = 0) -> Any:
    labels = {"app": name}
    return k8s.V1StatefulSet(
        metadata=k8s.V1ObjectMeta(name=name),
        spec=k8s.V1StatefulSetSpec(
            replicas=replicas,
            selector=k8s.V1LabelSelector(match_labels=labels),
            template=k8s.V1PodTemplateSpec(
                metadata=k8s.V1ObjectMeta(labels=labels),
                spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
            ),
        ),
    )


def test_typed_statefulset_crud(api_client: Any, ns: str) -> None:
    apps = k8s.AppsV1Api(api_client)
    created = apps.create_namespaced_stateful_set(ns, _sts("web"))
    assert created.metadata.uid and created.metadata.generation == 1
    assert created.spec.update_strategy.type == "RollingUpdate"  # server defaults
    assert created.spec.pod_management_policy == "OrderedReady"
    got = apps.read_namespaced_stateful_set("web", ns)
    assert got.metadata.uid == created.metadata.uid  # (the StatefulSet controller may have written status)
    lst = apps.list_namespaced_stateful_set(ns)
    assert [s.metadata.name for s in lst.items] == ["web"]
    # a dict body is sent as a strategic merge patch
    patched = apps.patch_namespaced_stateful_set(
        "web", ns, {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
    )
    assert [c.image for c in patched.spec.template.spec.containers] == ["nginx:2"]
    assert patched.metadata.generation == 2
    # a list body is a JSON patch; the scale subresource takes a dict
    patched = apps.patch_namespaced_stateful_set(
        "web", ns, [{"op": "add", "path": "/spec/minReadySeconds", "value": 3}]
    )
    assert patched.spec.min_ready_seconds == 3
    scale = apps.patch_namespaced_stateful_set_scale("web", ns, {"spec": {"replicas": 0}})
    assert scale.spec.replicas == 0 and scale.status.selector == "app=web"
    # read-modify-replace as client-go's RetryOnConflict does it: the StatefulSet controller may
    # write the set's status (after the scale to 0) between the read and the replace
    for _ in range(10):
        current = apps.read_namespaced_stateful_set("web", ns)
        current.spec.revision_history_limit = 5
        try:
            replaced = apps.replace_namespaced_stateful_set("web", ns, current)
            break
        except ApiException as conflict:
            if conflict.status != 409:
                raise
    else:
        pytest.fail("the replace met a conflict 10 times in a row")
    assert replaced.spec.revision_history_limit == 5 and replaced.metadata.generation == 4
    stale = current
    stale.spec.revision_history_limit = 6
    with pytest.raises(ApiException) as e:
        apps.replace_namespaced_stateful_set("web", ns, stale)
    assert e.value.status == 409
    with pytest.raises(ApiException) as e:
        apps.create_namespaced_stateful_set(ns, _sts("web"))
    assert e.value.status == 409
    status = apps.delete_namespaced_stateful_set("web", ns)
    assert status["status"] == "Success"  # the 37 client returns delete responses as plain dicts
    with pytest.raises(ApiException) as e:
        apps.read_namespaced_stateful_set("web", ns)
    assert e.value.status == 404


def test_typed_pod_and_configmap_crud(api_client: Any, ns: str) -> None:
    core = k8s.CoreV1Api(api_client)
    pod = k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="p", labels={"a": "b"}),
        spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="c", image="nginx")]),
    )
    created = core.create_namespaced_pod(ns, pod)
    assert created.spec.restart_policy == "Always" and created.spec.containers[0].termination_message_path
    assert core.read_namespaced_pod("p", ns).metadata.uid == created.metadata.uid
    assert [p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="a=b").items] == ["p"]
    patched = core.patch_namespaced_pod("p", ns, {"metadata": {"labels": {"c": "d"}}})
    assert patched.metadata.labels == {"a": "b", "c": "d"}
    core.delete_namespaced_pod("p", ns, grace_period_seconds=0)
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("p", ns)
    assert e.value.status == 404

    cm = core.create_namespaced_config_map(
        ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="c"), data={"k": "v"})
    )
    assert cm.data == {"k": "v"}
    cm = core.patch_namespaced_config_map("c", ns, {"data": {"k2": "v2"}})
    assert cm.data == {"k": "v", "k2": "v2"}
    cm.data = {"only": "1"}
    cm = core.replace_namespaced_config_map("c", ns, cm)
    assert cm.data == {"only": "1"}
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns).items] == ["c"]
    status = core.delete_namespaced_config_map("c", ns)
    assert status["status"] == "Success"  # the 37 client returns delete responses as plain dicts
    assert core.list_namespaced_config_map(ns).items == []


STS_WITH_SCHEDULING = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "gang"},
    "spec": {
        "replicas": 0,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "gang"}},
        "scheduling": {"schedulingPolicy": {"gang": {}}},
        "template": {
            "metadata": {"labels": {"app": "gang"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    },
}


def test_dynamic_client_discovery_crud_and_apply(api_client: Any, ns: str) -> None:
    dyn = dynamic.DynamicClient(api_client)
    sts = dyn.resources.get(api_version="apps/v1", kind="StatefulSet")
    assert sts.name == "statefulsets" and sts.namespaced and "sts" in sts.short_names
    assert set(sts.subresources) == {"scale", "status"}
    assert sts.subresources["scale"].kind == "Scale"
    workloads = dyn.resources.get(api_version="scheduling.k8s.io/v1beta1", kind="Workload")
    assert workloads.name == "workloads"

    created = sts.create(body=STS_WITH_SCHEDULING, namespace=ns)
    assert created.spec.scheduling.to_dict() == {"schedulingPolicy": {"gang": {}}}
    got = sts.get(name="gang", namespace=ns)
    assert got.metadata.uid == created.metadata.uid
    assert [i.metadata.name for i in sts.get(namespace=ns).items] == ["gang"]
    patched = sts.patch(
        name="gang",
        namespace=ns,
        body={"spec": {"minReadySeconds": 2}},
        content_type="application/merge-patch+json",
    )
    assert patched.spec.minReadySeconds == 2 and patched.spec.scheduling.schedulingPolicy.gang is not None

    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}}
    applied = cms.server_side_apply(body=body, namespace=ns, field_manager="py-apply")
    assert applied.data.a == "1"
    managers = [(m.manager, m.operation) for m in applied.metadata.managedFields]
    assert ("py-apply", "Apply") in managers
    with pytest.raises(dynamic.exceptions.ConflictError):
        cms.server_side_apply(body={**body, "data": {"a": "2"}}, namespace=ns, field_manager="other")
    forced = cms.server_side_apply(
        body={**body, "data": {"a": "2"}}, namespace=ns, field_manager="other", force_conflicts=True
    )
    assert forced.data.a == "2"
    sts_applied = sts.server_side_apply(
        body=STS_WITH_SCHEDULING, namespace=ns, field_manager="py-apply", force_conflicts=True
    )
    assert sts_applied.spec.scheduling.schedulingPolicy.gang is not None

    sts.delete(name="gang", namespace=ns)
    with pytest.raises(dynamic.exceptions.NotFoundError):
        sts.get(name="gang", namespace=ns)


def test_watch_stream(api_client: Any, ns: str) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="a")))
    seen: list[str] = []

    def produce() -> None:
        core.create_namespaced_config_map(ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="b")))
        core.patch_namespaced_config_map("b", ns, {"data": {"x": "1"}})
        core.delete_namespaced_config_map("a", ns)

    w = watch.Watch()
    producer = threading.Thread(target=produce)
    for ev in w.stream(core.list_namespaced_config_map, ns, timeout_seconds=15):
        seen.append(f"{ev['type']}:{ev['object'].metadata.name}")
        if seen == ["ADDED:a"]:
            producer.start()
        if "DELETED:a" in seen:
            w.stop()
    producer.join()
    assert seen == ["ADDED:a", "ADDED:b", "MODIFIED:b", "DELETED:a"]

    # the dynamic client's watch, resumed from a list resourceVersion
    dyn = dynamic.DynamicClient(api_client)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    rv = cms.get(namespace=ns).metadata.resourceVersion
    core.create_namespaced_config_map(ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="c")))
    events = []
    for ev in cms.watch(namespace=ns, resource_version=rv, timeout=10):
        events.append((ev["type"], ev["object"].metadata.name))
        break
    assert events == [("ADDED", "c")]
