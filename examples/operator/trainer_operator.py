"""A tiny operator, as a gangplane user would write one: TrainingRun → a gang-scheduled StatefulSet.

For each ``TrainingRun`` it keeps one StatefulSet whose pods are placed all-or-nothing in one rack
(KEP-6277 ``spec.scheduling``), owned by the run so that deleting the run deletes everything, and
reports ``status.readyWorkers`` / ``status.phase`` back on the run. It uses only the official
``kubernetes`` client, so it runs unchanged against gangplane or a real cluster.
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client, dynamic, watch
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
    """Bring one run's StatefulSet and status in line with its spec (level-triggered).

    StatefulSets go through the dynamic client: ``spec.scheduling`` is KEP-6277's field, which the
    typed models of the released client do not know yet.
    """
    custom = client.CustomObjectsApi(api)
    statefulsets = dynamic.DynamicClient(api).resources.get(api_version="apps/v1", kind="StatefulSet")
    try:
        run = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
    except ApiException as e:
        if e.status == 404:
            return  # deleted: the garbage collector removes what it owned
        raise
    want = desired_statefulset(run)
    try:
        sts = statefulsets.get(name=name, namespace=namespace).to_dict()
    except ApiException as e:
        if e.status != 404:
            raise
        sts = statefulsets.create(body=want, namespace=namespace).to_dict()
    else:
        if sts["spec"]["replicas"] != want["spec"]["replicas"]:
            patch = {"spec": {"replicas": want["spec"]["replicas"]}}
            sts = statefulsets.patch(
                name=name, namespace=namespace, body=patch, content_type="application/merge-patch+json"
            ).to_dict()
    ready = (sts.get("status") or {}).get("readyReplicas") or 0
    phase = "Running" if ready == run["spec"]["workers"] else "Pending"
    status = run.get("status") or {}
    if status.get("readyWorkers") != ready or status.get("phase") != phase:
        try:
            custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, namespace, PLURAL, name, {"status": {"readyWorkers": ready, "phase": phase}}
            )
        except ApiException as e:
            # Deleted since the read above: whatever was created for it in between names the old
            # uid as its owner, so the garbage collector removes it too.
            if e.status != 404:
                raise


def run(api: client.ApiClient, namespace: str, stop: threading.Event) -> None:
    """Watch TrainingRuns and their StatefulSets in ``namespace``; reconcile on every change."""
    custom = client.CustomObjectsApi(api)
    statefulsets = dynamic.DynamicClient(api).resources.get(api_version="apps/v1", kind="StatefulSet")
    lock = threading.Lock()

    def reconcile_each(events: Any, key_of: Any) -> None:
        for ev in events:
            if stop.is_set():
                return
            key = key_of(ev["object"])
            if key:
                with lock:
                    reconcile(api, namespace, key)

    def follow_runs() -> None:
        while not stop.is_set():
            w = watch.Watch()
            stream = w.stream(
                custom.list_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL, timeout_seconds=1
            )
            reconcile_each(stream, lambda obj: obj["metadata"]["name"])

    def follow_statefulsets() -> None:
        def owner(obj: Any) -> str:
            for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
                if ref.get("kind") == "TrainingRun":
                    return ref["name"]
            return ""

        while not stop.is_set():
            events = statefulsets.watch(namespace=namespace, timeout=1)
            reconcile_each(({"object": ev["raw_object"]} for ev in events), owner)

    threads = [threading.Thread(target=f, daemon=True) for f in (follow_runs, follow_statefulsets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
