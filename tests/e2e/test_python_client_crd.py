"""The official Python client (kubernetes 37) on custom resources over HTTP: CRD created through the
typed apiextensions API, then the dynamic client discovers the new kind and creates, reads, patches,
applies, watches and deletes custom objects; CustomObjectsApi lists them and reads /scale."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.crd_support import crontab, crontab_crd
from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace

pytestmark = pytest.mark.e2e

k8s = pytest.importorskip("kubernetes.client")
config = pytest.importorskip("kubernetes.config")
dynamic = pytest.importorskip("kubernetes.dynamic")
watch = pytest.importorskip("kubernetes.watch")


@pytest.fixture
def api_client(server: Server) -> Iterator[Any]:
    c = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield c
    c.close()


@pytest.fixture
def ns(api_client: Any, server: Server) -> Iterator[str]:
    name = "pycrd-" + uuid.uuid4().hex[:8]
    k8s.CoreV1Api(api_client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    yield name
    delete_namespace(server, name)


@pytest.fixture
def group(api_client: Any) -> Iterator[str]:
    g = f"py{uuid.uuid4().hex[:8]}.example.com"
    body = crontab_crd()
    body["spec"]["group"] = g
    body["metadata"]["name"] = f"crontabs.{g}"
    ext = k8s.ApiextensionsV1Api(api_client)
    created = ext.create_custom_resource_definition(body)
    assert created.metadata.name == f"crontabs.{g}"
    got = ext.read_custom_resource_definition(f"crontabs.{g}")
    assert {c.type: c.status for c in got.status.conditions} == {
        "NamesAccepted": "True",
        "Established": "True",
    }
    yield g
    ext.delete_custom_resource_definition(f"crontabs.{g}")


def body(group: str, name: str, **spec: Any) -> dict[str, Any]:
    b = crontab(name, **spec)
    b["apiVersion"] = f"{group}/v1"
    del b["metadata"]["namespace"]
    return b


def test_dynamic_client_on_custom_resources(api_client: Any, ns: str, group: str) -> None:
    dyn = dynamic.DynamicClient(api_client)
    crontabs = dyn.resources.get(api_version=f"{group}/v1", kind="CronTab")
    assert crontabs.namespaced and crontabs.short_names == ["ct"]
    made = crontabs.create(body=body(group, "a"), namespace=ns)
    assert made.spec.replicas == 1 and made.metadata.generation == 1
    patched = crontabs.patch(
        name="a",
        namespace=ns,
        body={"spec": {"image": "cron:2"}},
        content_type="application/merge-patch+json",
    )
    assert patched.spec.image == "cron:2"
    applied = crontabs.server_side_apply(
        body={
            "apiVersion": f"{group}/v1",
            "kind": "CronTab",
            "metadata": {"name": "a"},
            "spec": {"tags": ["x"]},
        },
        namespace=ns,
        field_manager="py-apply",
    )
    assert applied.spec.tags == ["x"] and applied.spec.image == "cron:2"
    with pytest.raises(dynamic.exceptions.UnprocessibleEntityError) as e:
        crontabs.patch(
            name="a",
            namespace=ns,
            body={"spec": {"replicas": 50}},
            content_type="application/merge-patch+json",
        )
    assert "replicas must not exceed maxReplicas" in str(e.value.body)

    custom = k8s.CustomObjectsApi(api_client)
    listed = custom.list_namespaced_custom_object(group, "v1", ns, "crontabs")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    scale = custom.get_namespaced_custom_object_scale(group, "v1", ns, "crontabs", "a")
    assert scale["spec"] == {"replicas": 1}

    seen: list[str] = []
    started = threading.Event()

    def watcher() -> None:
        w = watch.Watch()
        for ev in w.stream(
            custom.list_namespaced_custom_object, group, "v1", ns, "crontabs", timeout_seconds=20
        ):
            started.set()
            seen.append(f"{ev['type']} {ev['object']['metadata']['name']}")
            if ev["type"] == "DELETED":
                w.stop()

    t = threading.Thread(target=watcher)
    t.start()
    assert started.wait(20)  # the synthetic ADDED of "a" arrived: the watch is live
    crontabs.delete(name="a", namespace=ns)
    t.join(20)
    assert seen[0] == "ADDED a" and seen[-1] == "DELETED a"
