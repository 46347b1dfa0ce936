"""A defaulted ``KubeSchedulerProfile`` turned into gangplane's :class:`~scheduler.interfaces.Profile`.

This is what kube's ``frameworkruntime.NewFramework`` decides before it schedules anything:

* every plugin named at some extension point must be in the registry; the first unknown one
  fails in kube's words (``ScorePlugin "Foo" does not exist``), at the first extension point
  that lists it (per-point lists first, then MultiPoint, in kube's order);
* a plugin listed at one extension point must implement it (``plugin "X" does not extend
  FilterPlugin plugin``) and may be listed there once;
* MultiPoint expands to every extension point the plugin implements, unless disabled there
  (by name or ``*``); a plugin listed at a point explicitly overrides its MultiPoint entry;
* exactly one QueueSort plugin, at least one Bind plugin;
* Score weights: the point's own entry, else the MultiPoint entry; 0 (unset) means 1.

gangplane's framework instantiates a profile's plugins once and places each at the points it
implements unless ``disabled`` there, so the computed per-point lists become the plugin list
(MultiPoint order, then the plugins named only at some extension point) plus a ``disabled`` set
per point. Within one extension point the plugins therefore run in that list's order; kube
runs explicitly re-configured plugins first there (the two differ only for a configuration
that lists a MultiPoint plugin again at a single extension point).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.config.decode import KUBE_POINTS, POINTS
from scheduler.framework import implements
from scheduler.interfaces import (
    BindPlugin,
    FilterPlugin,
    Handle,
    PermitPlugin,
    PlacementFeasiblePlugin,
    PlacementGeneratePlugin,
    PlacementScorePlugin,
    PluginSpec,
    PodGroupPostFilterPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    Profile,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)

Obj = dict[str, Any]

#: extension point -> the protocol a plugin implements to run there (kube's interface names)
PROTOCOLS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
    "placementGenerate": PlacementGeneratePlugin,
    "placementFeasible": PlacementFeasiblePlugin,
    "placementScore": PlacementScorePlugin,
    "podGroupPostFilter": PodGroupPostFilterPlugin,
}

#: the order kube's ``getExtensionPoints`` visits (the first failing point names the error)
_RUNTIME_ORDER = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
    "placementGenerate",
    "placementFeasible",
    "placementScore",
    "podGroupPostFilter",
)
assert set(_RUNTIME_ORDER) == set(POINTS) and set(KUBE_POINTS) <= set(POINTS)

#: kube-scheduler plugins gangplane does not have (nothing to check: no volumes, no images)
KUBE_ONLY_PLUGINS = frozenset(
    {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "ImageLocality"}
)


class ProfileError(ValueError):
    """The framework cannot be built from this profile (kube: ``creating profile for scheduler name ...``).

    ``point`` and ``plugin`` say which entry of ``plugins`` is at fault, so that the caller can
    name it by its path in the user's own file (the defaulted lists have other indexes).
    """

    def __init__(self, message: str, point: str = "", plugin: str = "") -> None:
        super().__init__(message)
        self.point = point
        self.plugin = plugin


def proto_name(point: str) -> str:
    return PROTOCOLS[point].__name__


def _unknown(point: str, name: str, listed_at: str) -> ProfileError:
    msg = f'{proto_name(point)} "{name}" does not exist'
    if name in KUBE_ONLY_PLUGINS:
        msg += " (a kube-scheduler plugin gangplane does not have: it simulates no volumes or images)"
    return ProfileError(msg, listed_at, name)


def build_profile(
    prof: Obj,
    registry: Mapping[str, Callable[[dict[str, Any], Any], Any]],
    global_percentage: int | None,
) -> Profile:
    """gangplane's :class:`Profile` for a defaulted, validated v1 profile; :class:`ProfileError` if kube would refuse it."""
    name = prof.get("schedulerName") or ""
    plugins: Obj = prof.get("plugins") or {}
    args_by_name: dict[str, dict[str, Any]] = {
        pc.get("name", ""): dict(pc.get("args") or {}) for pc in prof.get("pluginConfig") or []
    }
    for a in args_by_name.values():
        a.pop("kind", None)
        a.pop("apiVersion", None)

    def enabled(point: str) -> list[Obj]:
        return list((plugins.get(point) or {}).get("enabled") or [])

    def disabled(point: str) -> set[str]:
        return {p.get("name", "") for p in (plugins.get(point) or {}).get("disabled") or []}

    multi = enabled("multiPoint")
    needed: list[str] = []
    for point in ("multiPoint", *POINTS):
        for p in enabled(point):
            if p.get("name", "") not in needed:
                needed.append(p.get("name", ""))

    instances: dict[str, Any] = {}
    probe = Handle(scheduler_name=name)
    for n in needed:
        factory = registry.get(n)
        if factory is None:
            continue
        try:
            instances[n] = factory(dict(args_by_name.get(n, {})), probe)
        except Exception as e:  # a plugin refusing its args fails the start, as kube's factory error does
            raise ProfileError(f'initializing plugin "{n}": {e}', plugin=n) from e

    # per-point lists first (kube's updatePluginList), then MultiPoint (expandMultiPointPlugins)
    per_point: dict[str, list[str]] = {}
    for point in _RUNTIME_ORDER:
        seen: list[str] = []
        for p in enabled(point):
            n = p.get("name", "")
            pl = instances.get(n)
            if pl is None:
                raise _unknown(point, n, point)
            if not implements(pl, PROTOCOLS[point]):
                raise ProfileError(f'plugin "{n}" does not extend {proto_name(point)} plugin', point, n)
            if n in seen:
                raise ProfileError(f'plugin "{n}" already registered as "{proto_name(point)}"', point, n)
            seen.append(n)
        per_point[point] = seen
    if multi:
        for point in _RUNTIME_ORDER:
            off = disabled(point)
            if "*" in off:
                continue
            explicit = per_point[point]
            from_multi: list[str] = []
            for p in multi:
                n = p.get("name", "")
                pl = instances.get(n)
                if pl is None:
                    raise _unknown(point, n, "multiPoint")
                if not implements(pl, PROTOCOLS[point]) or n in off or n in explicit:
                    continue
                if n in from_multi:
                    raise ProfileError(
                        f'plugin "{n}" already registered as "{proto_name(point)}"', "multiPoint", n
                    )
                from_multi.append(n)
            overrides = [n for n in explicit if n in {p.get("name") for p in multi}]
            rest = [n for n in explicit if n not in overrides]
            per_point[point] = [*overrides, *from_multi, *rest]

    if len(per_point["queueSort"]) != 1:
        raise ProfileError(
            f'only one queue sort plugin required for profile with scheduler name "{name}", '
            f"but got {len(per_point['queueSort'])}"
        )
    if not per_point["bind"]:
        raise ProfileError(f'at least one bind plugin is needed for profile with scheduler name "{name}"')

    # Score weights (kube's getScoreWeights): the Score entry wins over the MultiPoint one
    # (gangplane's PlacementScore plugins are weighted the same way, from their own point's entry)
    weights: dict[str, int] = {}
    for p in [*enabled("score"), *enabled("placementScore"), *multi]:
        n = p.get("name", "")
        if n in weights or n not in instances:
            continue
        if not (implements(instances[n], ScorePlugin) or implements(instances[n], PlacementScorePlugin)):
            continue
        weights[n] = int(p.get("weight") or 0) or 1

    order = [p.get("name", "") for p in multi if p.get("name", "") in instances]
    for point in _RUNTIME_ORDER:
        for n in per_point[point]:
            if n not in order:
                order.append(n)
    used = [n for n in order if any(n in per_point[pt] for pt in _RUNTIME_ORDER)]
    off_by_point: dict[str, set[str]] = {}
    for point in _RUNTIME_ORDER:
        off = {n for n in used if implements(instances[n], PROTOCOLS[point]) and n not in per_point[point]}
        if off:
            off_by_point[point] = off
    pct = prof.get("percentageOfNodesToScore")
    if pct is None:
        pct = global_percentage
    return Profile(
        scheduler_name=name,
        plugins=[PluginSpec(n, weights.get(n, 0)) for n in used],
        plugin_args={n: a for n, a in args_by_name.items() if n in used},
        percentage_of_nodes_to_score=pct or None,
        disabled=off_by_point,
    )
