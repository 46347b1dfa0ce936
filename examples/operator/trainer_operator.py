"""A tiny operator, as a gangplane user would write one: TrainingRun → a gang-scheduled StatefulSet.

For each ``TrainingRun`` it keeps one StatefulSet whose pods are placed all-or-nothing in one rack
(KEP-6277 ``spec.scheduling``), owned by the run so that deleting the run deletes everything, and
reports ``status.readyWorkers`` / ``status.phase`` back on the run. It uses only the official
``kubernetes`` client, so it runs unchanged against gangplane or a real cluster.
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "training.example.com", "v1", "trainingruns"
RACK = "topology.kubernetes.io/rack"


def desired_statefulset(run: dict[str, Any]) -> dict[str, Any]:
    """The StatefulSet a TrainingRun asks for (pure: no I/O, so it is trivially tested)."""
    md, spec = run["metadata"], run["spec"]
    labels = {"training.example.com/run": md["name"]}
    gpus = str(spec.get("gpusPerWorker", 1))
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": md["name"],
            "namespace": md["namespace"],
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "TrainingRun",
                    "name": md["name"],
                    "uid": md["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": spec["workers"],
            "podManagementPolicy": "Parallel",
            "serviceName": md["name"],
            "selector": {"matchLabels": labels},
            "scheduling": {
                "schedulingPolicy": {"gang": {}},
                "schedulingConstraints": {"topology": [{"key": RACK}]},
            },
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "trainer",
                            "image": spec.get("image", "trainer:latest"),
                            "resources": {"limits": {"nvidia.com/gpu": gpus}},
                        }
                    ]
                },
            },
        },
    }


def reconcile(api: client.ApiClient, namespace: str, name: str) -> None:
    """Bring one run's StatefulSet and status in line with its spec (level-triggered)."""
    custom, apps = client.CustomObjectsApi(api), client.AppsV1Api(api)
    try:
        run = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    except ApiException as e:
        if e.status == 404:
            return  # deleted: the garbage collector removes what it owned
        raise
    want = desired_statefulset(run)
    try:
        sts = apps.read_namespaced_stateful_set(name, namespace)
    except ApiException as e:
        if e.status != 404:
            raise
        sts = apps.create_namespaced_stateful_set(namespace, want)
    else:
        if sts.spec.replicas != want["spec"]["replicas"]:
            sts = apps.patch_namespaced_stateful_set(
                name, namespace, {"spec": {"replicas": want["spec"]["replicas"]}}
            )
    ready = (sts.status.ready_replicas if sts.status else 0) or 0
    phase = "Running" if ready == run["spec"]["workers"] else "Pending"
    status = run.get("status") or {}
    if status.get("readyWorkers") != ready or status.get("phase") != phase:
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, PLURAL, name, {"status": {"readyWorkers": ready, "phase": phase}}
        )


def run(api: client.ApiClient, namespace: str, stop: threading.Event) -> None:
    """Watch TrainingRuns and their StatefulSets in ``namespace``; reconcile on every change."""
    custom, apps = client.CustomObjectsApi(api), client.AppsV1Api(api)
    lock = threading.Lock()

    def follow(list_fn: Any, *args: Any, key_of: Any) -> None:
        while not stop.is_set():
            w = watch.Watch()
            for ev in w.stream(list_fn, *args, timeout_seconds=1):
                if stop.is_set():
                    w.stop()
                    return
                key = key_of(ev["object"])
                if key:
                    with lock:
                        reconcile(api, namespace, key)

    def run_key(obj: Any) -> str:
        return obj["metadata"]["name"]

    def owner_key(obj: Any) -> str:
        for ref in obj.metadata.owner_references or []:
            if ref.kind == "TrainingRun":
                return ref.name
        return ""

    threads = [
        threading.Thread(
            target=follow,
            args=(custom.list_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL),
            kwargs={"key_of": run_key},
            daemon=True,
        ),
        threading.Thread(
            target=follow,
            args=(apps.list_namespaced_stateful_set, namespace),
            kwargs={"key_of": owner_key},
            daemon=True,
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
