"""A small kopf operator on the CronTab CRD, run by tests/e2e/test_kopf_operator.py with ``kopf run``.

For each CronTab it owns a ConfigMap ``<name>-config`` holding the image (created on create,
kept in step on update, left to the garbage collector through its ownerReference) and, when the
CronTab is deleted, records the deletion in the ConfigMap ``crontab-audit`` before kopf removes its
finalizer. The CRD's group comes from ``CRONTAB_GROUP``.
"""

from __future__ import annotations

import os
from typing import Any

import kopf
import kubernetes

GROUP = os.environ.get("CRONTAB_GROUP", "stable.example.com")


def _core() -> kubernetes.client.CoreV1Api:
    kubernetes.config.load_kube_config()
    return kubernetes.client.CoreV1Api()


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = True
    settings.watching.server_timeout = 30


@kopf.on.create(GROUP, "v1", "crontabs")
def create_fn(spec: Any, name: str, namespace: str, body: Any, **_: Any) -> dict[str, str]:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-config"},
        "data": {"image": spec.get("image", "")},
    }
    kopf.adopt(cm, owner=body)
    _core().create_namespaced_config_map(namespace, cm)
    return {"configmap": f"{name}-config"}


@kopf.on.update(GROUP, "v1", "crontabs", field="spec.image")
def update_fn(new: Any, name: str, namespace: str, **_: Any) -> None:
    _core().patch_namespaced_config_map(f"{name}-config", namespace, {"data": {"image": new or ""}})


@kopf.on.delete(GROUP, "v1", "crontabs")
def delete_fn(name: str, namespace: str, **_: Any) -> None:
    core = _core()
    try:
        core.patch_namespaced_config_map("crontab-audit", namespace, {"data": {name: "deleted"}})
    except kubernetes.client.ApiException as e:
        if e.status != 404:
            raise
        core.create_namespaced_config_map(
            namespace,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "crontab-audit"},
                "data": {name: "deleted"},
            },
        )
