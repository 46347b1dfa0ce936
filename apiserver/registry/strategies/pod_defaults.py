"""Pod spec defaulting shared by Pods and pod templates (kube's ``SetDefaults_PodSpec`` and friends).

Kube applies the same ``SetDefaults_PodSpec``/``SetDefaults_Container`` to a Pod and to every
embedded ``PodTemplateSpec`` (Deployments, StatefulSets, ...); ``SetDefaults_Pod`` adds what only
real Pods get. Pure functions mutating wire-format (camelCase) dicts in place.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from apiserver.api.podresources import is_supported_pod_level_resource
from apiserver.api.types import Obj, as_dict, as_list
from apiserver.api.types import as_str as _str
from apiserver.quantity import (
    format_quantity,
    parse_quantity_full,
)
from apiserver.registry.strategies.pod_validation import MODE_SOURCES, PROBES, VOLUME_SOURCES
from featuregates import GENERIC_WORKLOAD, FeatureGate

DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_SCHEDULER_NAME = "default-scheduler"
TERMINATION_MESSAGE_PATH_DEFAULT = "/dev/termination-log"
VOLUME_DEFAULT_MODE = 420  # 0644
#: the container lists :func:`~apiserver.api.podresources.all_containers` walks, in its order
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def canonical_resource_list(rl: Any) -> Any:
    """``SetDefaults_ResourceList`` + serialization: round up to milli, write canonically.

    Unparseable values are left alone so validation can report them.
    """
    if not isinstance(rl, dict):
        return rl
    out: Obj = {}
    for k, v in rl.items():
        if type(v) is str:
            canonical = _canonical_text(v)
            out[k] = v if canonical is None else canonical
        else:
            canonical = _canonical(v)
            out[k] = v if canonical is None else canonical
    return out


def _canonical(v: Any) -> str | None:
    """The canonical form of one quantity rounded up to milli; None when it does not parse."""
    try:
        p = parse_quantity_full(v)
    except (ValueError, TypeError):
        return None
    value = p.value
    milli = value * 1000
    if milli.denominator != 1:
        rounded = -((-abs(milli.numerator)) // milli.denominator)
        value = Fraction(rounded if value > 0 else -rounded, 1000)
    return format_quantity(value, p.format)


@lru_cache(maxsize=4096)
def _canonical_text(v: str) -> str | None:
    """:func:`_canonical` of a quantity string (every pod of a workload repeats the same few)."""
    return _canonical(v)


def image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` reports: ``latest`` when neither tag nor digest is given."""
    if not image:
        return ""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.split(":", 1)[1]
    return "" if digest else "latest"


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(key):
            probe[key] = value
    _default_handler(probe)


def _default_handler(handler: Any) -> None:
    if not isinstance(handler, dict):
        return
    http = handler.get("httpGet")
    if isinstance(http, dict):
        if not http.get("path"):
            http["path"] = "/"
        if not http.get("scheme"):
            http["scheme"] = "HTTP"


def default_container(c: Obj) -> None:
    """``SetDefaults_Container`` + ports, probes, env field refs and canonical resources."""
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if image_tag(_str(c.get("image"))) == "latest" else "IfNotPresent"
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = TERMINATION_MESSAGE_PATH_DEFAULT
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    for p in as_list(c.get("ports")):
        if isinstance(p, dict) and not p.get("protocol"):
            p["protocol"] = "TCP"
    for key in PROBES:
        probe = c.get(key)
        if probe is not None:  # most containers have none (``_default_probe`` skips a non-dict)
            _default_probe(probe)
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for key in ("postStart", "preStop"):
            _default_handler(lifecycle.get(key))
    for env in as_list(c.get("env")):
        ref = as_dict(as_dict(as_dict(env).get("valueFrom")).get("fieldRef"))
        if ref and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"
    res = c.get("resources")
    if isinstance(res, dict):
        for key in ("limits", "requests"):
            if isinstance(res.get(key), dict):
                res[key] = canonical_resource_list(res[key])


def _default_volume(v: Obj) -> None:
    if not any(k in v for k in VOLUME_SOURCES):
        v["emptyDir"] = {}
    for key in MODE_SOURCES:
        src = v.get(key)
        if isinstance(src, dict) and src.get("defaultMode") is None:
            src["defaultMode"] = VOLUME_DEFAULT_MODE
    hp = v.get("hostPath")
    if isinstance(hp, dict) and hp.get("type") is None:
        hp["type"] = ""
    for source in as_list(as_dict(v.get("projected")).get("sources")):
        sat = as_dict(source).get("serviceAccountToken")
        if isinstance(sat, dict) and sat.get("expirationSeconds") is None:
            sat["expirationSeconds"] = 3600
    for item in as_list(as_dict(v.get("downwardAPI")).get("items")):
        ref = as_dict(as_dict(item).get("fieldRef"))
        if ref and not ref.get("apiVersion"):
            ref["apiVersion"] = "v1"
    pvc_tmpl = as_dict(as_dict(v.get("ephemeral")).get("volumeClaimTemplate"))
    if pvc_tmpl:
        default_pvc_spec(as_dict(pvc_tmpl.get("spec")))


def default_pvc_spec(spec: Obj) -> None:
    """``SetDefaults_PersistentVolumeClaimSpec``: Filesystem volumes; canonical requests."""
    if spec is None:
        return
    if not spec.get("volumeMode"):
        spec["volumeMode"] = "Filesystem"
    res = spec.get("resources")
    if isinstance(res, dict):
        for key in ("limits", "requests"):
            if isinstance(res.get(key), dict):
                res[key] = canonical_resource_list(res[key])


def default_pod_spec(spec: Obj) -> None:
    """``SetDefaults_PodSpec`` and the nested defaulters, for Pods and templates alike."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for key in _CONTAINER_LISTS:  # ``all_containers``' order, without its generator
        containers = spec.get(key)
        if isinstance(containers, list):
            for c in containers:
                if isinstance(c, dict):
                    default_container(c)
    for v in as_list(spec.get("volumes")):
        if isinstance(v, dict):
            _default_volume(v)
    if isinstance(spec.get("overhead"), dict):
        spec["overhead"] = canonical_resource_list(spec["overhead"])
    res = spec.get("resources")
    if isinstance(res, dict):
        for key in ("limits", "requests"):
            if isinstance(res.get(key), dict):
                res[key] = canonical_resource_list(res[key])


def default_pod_template(template: Any) -> None:
    """Defaults of an embedded ``PodTemplateSpec`` (no Pod-only defaults)."""
    if isinstance(template, dict):
        spec = template.get("spec")
        if isinstance(spec, dict):
            default_pod_spec(spec)


def default_pod(pod: Obj) -> None:
    """``SetDefaults_Pod``: template defaults plus requests-from-limits, service links, host ports.

    Requests default to limits only on Pods, never on templates, so a template keeps what the
    user wrote and each Pod created from it gets the derived requests.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    default_pod_spec(spec)
    for key in ("containers", "initContainers"):
        for c in as_list(spec.get(key)):
            res = as_dict(c).get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and isinstance(res.get("limits"), dict):
                reqs = res.setdefault("requests", {})
                if isinstance(reqs, dict):
                    for k, v in res["limits"].items():
                        reqs.setdefault(k, v)
    pod_res = spec.get("resources")
    if isinstance(pod_res, dict) and isinstance(pod_res.get("limits"), dict):
        reqs = pod_res.setdefault("requests", {})
        if isinstance(reqs, dict):
            for k, v in pod_res["limits"].items():
                if is_supported_pod_level_resource(k):
                    reqs.setdefault(k, v)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for c in as_list(spec.get(key)):
                for p in as_list(as_dict(c).get("ports")):
                    if isinstance(p, dict) and not p.get("hostPort") and p.get("containerPort"):
                        p["hostPort"] = p["containerPort"]


def drop_disabled_pod_spec_fields(spec: Any, old_spec: Any, gates: FeatureGate) -> None:
    """``dropDisabledFields``: a gated field is cleared unless the old object already used it."""
    if not isinstance(spec, dict):
        return
    if not gates.enabled(GENERIC_WORKLOAD) and not (
        isinstance(old_spec, dict) and old_spec.get("schedulingGroup") is not None
    ):
        spec.pop("schedulingGroup", None)
