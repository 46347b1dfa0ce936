"""The environment and files a process in a simulated container sees, built from the stored pod.

* environment: ``PATH``, ``HOSTNAME``, ``HOME``, the container's ``env`` (literal values,
  ``fieldRef`` to the pod's name, namespace, IPs and node, ``configMapKeyRef``/``secretKeyRef``
  read through ``lookup``) and ``envFrom`` config maps and secrets;
* files: ``/etc/hostname``, ``/etc/hosts``, ``/etc/resolv.conf`` as kubelet writes them, and the
  keys of ConfigMap and Secret volumes at their ``mountPath``.

Files a process writes (``kubectl cp`` into the pod, ``echo > f``) stay in the
:class:`Containers` table for the life of the container instance (its pod UID).

The shell that plays a container's processes (:mod:`.shell`, with tarfile for ``kubectl cp``) is
imported by the first container made: the API app holds a :class:`Containers` table from its start,
and a plane that never serves an exec, attach or cp does not load it (session 31).
"""

from __future__ import annotations

import base64
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from apiserver.api.types import Obj, as_dict, as_list
from apiserver.meta import parse_time

if TYPE_CHECKING:
    from apiserver.kubeletsim.shell import Container

#: ``lookup(plural, namespace, name)``: a stored ConfigMap or Secret, or None
Lookup = Callable[[str, str, str], Obj | None]
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _container_spec(pod: Obj, name: str) -> Obj:
    spec = as_dict(pod.get("spec"))
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in as_list(spec.get(key)):
            if as_dict(c).get("name") == name:
                return as_dict(c)
    return {}


def _field(pod: Obj, path: str) -> str:
    md, spec, st = as_dict(pod.get("metadata")), as_dict(pod.get("spec")), as_dict(pod.get("status"))
    if path.startswith("metadata.labels['") or path.startswith("metadata.annotations['"):
        which, key = path.split("['", 1)
        return str(as_dict(md.get(which.split(".")[1])).get(key.rstrip("']"), ""))
    return str(
        {
            "metadata.name": md.get("name"),
            "metadata.namespace": md.get("namespace"),
            "metadata.uid": md.get("uid"),
            "spec.nodeName": spec.get("nodeName"),
            "spec.serviceAccountName": spec.get("serviceAccountName"),
            "status.podIP": st.get("podIP"),
            "status.hostIP": st.get("hostIP"),
        }.get(path)
        or ""
    )


def _data(obj: Obj | None, secret: bool) -> dict[str, bytes]:
    if obj is None:
        return {}
    out = {k: str(v).encode() for k, v in as_dict(obj.get("stringData" if secret else "data")).items()}
    if secret:
        for k, v in as_dict(obj.get("data")).items():
            try:
                out[k] = base64.b64decode(str(v))
            except ValueError:
                continue
    else:
        for k, v in as_dict(obj.get("binaryData")).items():
            try:
                out[k] = base64.b64decode(str(v))
            except ValueError:
                continue
    return out


def environment(pod: Obj, name: str, lookup: Lookup) -> dict[str, str]:
    md = as_dict(pod.get("metadata"))
    ns = str(md.get("namespace") or "")
    c = _container_spec(pod, name)
    hostname = str(as_dict(pod.get("spec")).get("hostname") or md.get("name") or "")
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": hostname, "HOME": "/root"}
    for src in as_list(c.get("envFrom")):
        src = as_dict(src)
        prefix = str(src.get("prefix") or "")
        if src.get("configMapRef"):
            data = _data(lookup("configmaps", ns, str(as_dict(src["configMapRef"]).get("name") or "")), False)
        elif src.get("secretRef"):
            data = _data(lookup("secrets", ns, str(as_dict(src["secretRef"]).get("name") or "")), True)
        else:
            continue
        env.update({prefix + k: v.decode(errors="replace") for k, v in data.items()})
    for e in as_list(c.get("env")):
        e = as_dict(e)
        key = str(e.get("name") or "")
        if not key:
            continue
        value_from = as_dict(e.get("valueFrom"))
        if "value" in e or not value_from:
            env[key] = str(e.get("value") or "")
        elif value_from.get("fieldRef"):
            env[key] = _field(pod, str(as_dict(value_from["fieldRef"]).get("fieldPath") or ""))
        elif value_from.get("configMapKeyRef") or value_from.get("secretKeyRef"):
            secret = bool(value_from.get("secretKeyRef"))
            ref = as_dict(value_from.get("secretKeyRef") or value_from.get("configMapKeyRef"))
            data = _data(
                lookup("secrets" if secret else "configmaps", ns, str(ref.get("name") or "")), secret
            )
            if str(ref.get("key")) in data:
                env[key] = data[str(ref.get("key"))].decode(errors="replace")
    return env


def files(pod: Obj, name: str, lookup: Lookup) -> dict[str, bytes]:
    md, spec, st = as_dict(pod.get("metadata")), as_dict(pod.get("spec")), as_dict(pod.get("status"))
    ns = str(md.get("namespace") or "")
    hostname = str(spec.get("hostname") or md.get("name") or "")
    pod_ip = str(st.get("podIP") or "")
    out = {
        "/etc/hostname": f"{hostname}\n".encode(),
        "/etc/hosts": (
            "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            + (f"{pod_ip}\t{hostname}\n" if pod_ip else "")
        ).encode(),
        "/etc/resolv.conf": (
            f"search {ns}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
        ).encode(),
    }
    volumes = {str(as_dict(v).get("name")): as_dict(v) for v in as_list(spec.get("volumes"))}
    for mount in as_list(_container_spec(pod, name).get("volumeMounts")):
        mount = as_dict(mount)
        vol = volumes.get(str(mount.get("name")))
        path = str(mount.get("mountPath") or "").rstrip("/")
        if vol is None or not path:
            continue
        if vol.get("configMap"):
            data = _data(lookup("configmaps", ns, str(as_dict(vol["configMap"]).get("name") or "")), False)
        elif vol.get("secret"):
            data = _data(lookup("secrets", ns, str(as_dict(vol["secret"]).get("secretName") or "")), True)
        else:
            out[path + "/.keep"] = b""
            continue
        for key, value in data.items():
            out[f"{path}/{key}"] = value
    return out


def started_at(pod: Obj, name: str) -> float:
    st = as_dict(pod.get("status"))
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in as_list(st.get(key)):
            if as_dict(cs).get("name") == name:
                running = as_dict(as_dict(as_dict(cs).get("state")).get("running"))
                return parse_time(running.get("startedAt")) or 0.0
    return 0.0


class Containers:
    """The simulated containers' writable state, keyed by (pod UID, container); at most ``limit``
    kept (least recently used go first), so a long-running server does not grow without bound."""

    def __init__(self, limit: int = 256, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.clock = clock
        self._items: OrderedDict[tuple[str, str], Container] = OrderedDict()

    def get(self, pod: Obj, name: str, lookup: Lookup) -> Container:
        uid = str(as_dict(pod.get("metadata")).get("uid") or "")
        key = (uid, name)
        c = self._items.get(key)
        if c is None:
            from apiserver.kubeletsim.shell import Container

            md = as_dict(pod.get("metadata"))
            hostname = str(as_dict(pod.get("spec")).get("hostname") or md.get("name") or "")
            c = Container(
                hostname=hostname,
                env=environment(pod, name, lookup),
                files=files(pod, name, lookup),
                started=started_at(pod, name),
                clock=self.clock,
            )
            self._items[key] = c
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(key)
        return c


__all__ = ["Containers", "environment", "files"]
