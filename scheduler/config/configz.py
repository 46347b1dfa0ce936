"""The effective configuration in the shape kube-scheduler's ``/configz`` serves it.

Since Kubernetes 1.36 (kubernetes/kubernetes#136044) kube-scheduler converts its internal
configuration back to the external ``kubescheduler.config.k8s.io/v1`` type before handing it to
component-base's ``configz``, which answers ``{"componentconfig": <that object>}`` encoded with
Go's ``encoding/json`` (not the API machinery serializer). What a client reads therefore follows
from three things, each reproduced here from the defaulted v1 document
(:func:`scheduler.config.defaults.set_defaults`):

* the round trip v1 → internal → v1: values the internal type holds without a pointer come back
  as pointers and are always written, so every plugin has a ``weight`` (0 where none was given)
  and ``parallelism``, the backoffs, ``schedulerName`` and the profiling switches always show;
  fields the internal type keeps as pointers (the profile's ``percentageOfNodesToScore``) stay
  absent when unset;
* ``encoding/json`` and the v1 tags: ``omitempty`` does nothing on a struct, so every extension
  point of ``plugins`` is written, ``{}`` when it has no plugins; slices and pointers tagged
  ``omitempty`` are left out when empty (``extenders``, ``ignoredResources``, ...); fields
  without the tag are always written (``leaderElection``, ``clientConnection``, InterPodAffinity's
  ``ignorePreferredTermsOfExistingPods``); a ``metav1.Duration`` prints as Go prints a duration
  (``1m`` comes back as ``1m0s``);
* plugin args converted to their v1 kind: each carries ``kind`` and ``apiVersion``; args of a
  plugin without an args kind are served as they were given (``null`` when none were).

Key order follows the Go structs' field order (JSON readers do not depend on it).
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.client.leaderelection import parse_duration
from scheduler.config.decode import API_VERSION, GANGPLANE_POINTS, KIND, KUBE_POINTS

Obj = dict[str, Any]

_UPSTREAM_PLACEMENT_ORDER = ("placementGenerate", "placementScore", "placementFeasible", "podGroupPostFilter")
#: ``v1.Plugins`` field order: kube's points, ``multiPoint``, then the KEP-6277 PodGroup-cycle points
#: in the order upstream's ``v1.Plugins`` declares them (generate, score, feasible, post-filter)
PLUGIN_SETS = (
    *KUBE_POINTS,
    "multiPoint",
    *sorted(GANGPLANE_POINTS, key=_UPSTREAM_PLACEMENT_ORDER.index),
)
LEADER_ELECTION = (
    "leaderElect",
    "leaseDuration",
    "renewDeadline",
    "retryPeriod",
    "resourceLock",
    "resourceName",
    "resourceNamespace",
)
DURATIONS = frozenset({"leaseDuration", "renewDeadline", "retryPeriod"})
CLIENT_CONNECTION = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
#: v1 args fields written even when zero (no ``omitempty``), with their zero value
ARGS_ALWAYS: dict[str, dict[str, Any]] = {
    "InterPodAffinityArgs": {"ignorePreferredTermsOfExistingPods": False},
}


def configz(effective: Obj) -> Obj:
    """``effective`` (the defaulted v1 document) as kube-scheduler serves it under ``componentconfig``."""
    cfg = copy.deepcopy(effective)
    out: Obj = {"kind": KIND, "apiVersion": API_VERSION, "parallelism": cfg.get("parallelism", 16)}
    le = cfg.get("leaderElection") or {}
    out["leaderElection"] = {
        k: go_duration(parse_duration(str(le.get(k) or "0s"))) if k in DURATIONS else le.get(k)
        for k in LEADER_ELECTION
    }
    out["leaderElection"]["leaderElect"] = bool(le.get("leaderElect"))
    cc = cfg.get("clientConnection") or {}
    out["clientConnection"] = {k: cc.get(k, "") for k in CLIENT_CONNECTION}
    out["enableProfiling"] = bool(cfg.get("enableProfiling"))
    out["enableContentionProfiling"] = bool(cfg.get("enableContentionProfiling"))
    out["percentageOfNodesToScore"] = cfg.get("percentageOfNodesToScore", 0)
    out["podInitialBackoffSeconds"] = cfg.get("podInitialBackoffSeconds", 1)
    out["podMaxBackoffSeconds"] = cfg.get("podMaxBackoffSeconds", 10)
    profiles = [_profile(p) for p in cfg.get("profiles") or []]
    if profiles:
        out["profiles"] = profiles
    if cfg.get("extenders"):
        out["extenders"] = cfg["extenders"]
    if cfg.get("delayCacheUntilActive"):
        out["delayCacheUntilActive"] = True
    return out


def _profile(p: Obj) -> Obj:
    out: Obj = {"schedulerName": p.get("schedulerName") or ""}
    if p.get("percentageOfNodesToScore") is not None:
        out["percentageOfNodesToScore"] = p["percentageOfNodesToScore"]
    plugins = p.get("plugins")
    if plugins is not None:
        out["plugins"] = {point: _plugin_set(plugins.get(point)) for point in PLUGIN_SETS}
    if p.get("pluginConfig"):
        out["pluginConfig"] = [_plugin_config(pc) for pc in p["pluginConfig"]]
    return out


def _plugin_set(ps: Obj | None) -> Obj:
    out: Obj = {}
    for key in ("enabled", "disabled"):
        plugins = (ps or {}).get(key)
        if plugins:
            out[key] = [{"name": x.get("name", ""), "weight": x.get("weight") or 0} for x in plugins]
    return out


def _plugin_config(pc: Obj) -> Obj:
    args = pc.get("args")
    if isinstance(args, dict) and args.get("kind") and args.get("apiVersion") == API_VERSION:
        # every v1 args field is ``omitempty`` (pointers, slices, strings) but those in ARGS_ALWAYS
        fields = {
            k: v
            for k, v in args.items()
            if k not in ("kind", "apiVersion") and v is not None and v != [] and v != ""
        }
        for k, zero in ARGS_ALWAYS.get(args["kind"], {}).items():
            fields.setdefault(k, zero)
        args = {"kind": args["kind"], "apiVersion": API_VERSION, **fields}
    return {"name": pc.get("name", ""), "args": args}


def go_duration(seconds: float) -> str:
    """``time.Duration.String()``: ``15s``, ``1m0s``, ``1h30m0s``, ``1.5s``, ``250ms``, ``0s``."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        return sign + _with_fraction(u, 3) + "µs"
    if u < 1_000_000_000:
        return sign + _with_fraction(u, 6) + "ms"
    whole = u // 1_000_000_000
    text = _with_fraction(u % 1_000_000_000 + (whole % 60) * 1_000_000_000, 9) + "s"
    minutes, hours = whole // 60 % 60, whole // 3600
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _with_fraction(value: int, digits: int) -> str:
    """``value`` (in units of 10^-digits) as Go prints it: the fraction without trailing zeros."""
    whole, frac = divmod(value, 10**digits)
    decimals = str(frac).rjust(digits, "0").rstrip("0")
    return f"{whole}.{decimals}" if decimals else str(whole)
