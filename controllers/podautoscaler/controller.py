"""The HorizontalPodAutoscaler controller (kube-controller-manager's ``horizontal-pod-autoscaler-controller``).

Every ``sync_period`` (``--horizontal-pod-autoscaler-sync-period``, 15 s) per HPA: read the
target's ``scale`` subresource, the pods its selector picks and their ``metrics.k8s.io`` usage,
compute the replicas each Resource metric asks for (:mod:`.replicas`, kube's tolerance 0.1), take
the largest, stabilize and rate-limit it with the ``behavior`` (:mod:`.behavior`), clamp to
``minReplicas``/``maxReplicas``, write ``scale`` when it differs (``SuccessfulRescale`` event) and
the status: ``currentReplicas``, ``desiredReplicas``, ``currentMetrics``, ``lastScaleTime`` and the
``AbleToScale``/``ScalingActive``/``ScalingLimited`` conditions with kube's reasons and messages.

Scaling a gang StatefulSet goes through its ``scale`` like any other; the StatefulSet
controller then moves the PodGroup's ``minCount`` (KEP-6277's scale lifecycle). Only
``Resource`` metrics are served by gangplane's metrics API; other metric types report
``ScalingActive=False``.
"""

from __future__ import annotations

import logging
from fractions import Fraction
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj, as_dict, as_list
from apiserver.client.events import EventRecorder
from apiserver.client.informer import Informer
from apiserver.client.interface import GVR, PODS, Client
from apiserver.meta import Clock, rfc3339, split_key
from apiserver.quantity import parse_quantity
from controllers.metrics import ControllerMetrics
from controllers.podautoscaler.behavior import Recommendation, ScaleEvent, normalize
from controllers.podautoscaler.replicas import MetricsError, replicas_for
from controllers.timed import TimedController

log = logging.getLogger("gangplane.hpa")

NAME = "horizontal-pod-autoscaler-controller"
HPAS = GVR("autoscaling", "v2", "horizontalpodautoscalers")
POD_METRICS = GVR("metrics.k8s.io", "v1beta1", "pods")
#: scaleTargetRef kinds this controller can scale (group, kind) -> resource
SCALABLE = {
    ("apps", "StatefulSet"): GVR("apps", "v1", "statefulsets"),
    ("apps", "Deployment"): GVR("apps", "v1", "deployments"),
    ("apps", "ReplicaSet"): GVR("apps", "v1", "replicasets"),
    ("", "ReplicationController"): GVR("", "v1", "replicationcontrollers"),
}
HISTORY = 3600.0

LIMITED_MESSAGES = {
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "ScaleUpLimit": "the desired replica count is increasing faster than the maximum scale rate",
    "ScaleDownLimit": "the desired replica count is decreasing faster than the maximum scale rate",
}
STABILIZED_MESSAGES = {
    "ScaleUpStabilized": "recent recommendations were lower than current one, applying the lowest recent recommendation",
    "ScaleDownStabilized": "recent recommendations were higher than current one, applying the highest recent recommendation",
}


def _group_of(api_version: str) -> str:
    return api_version.split("/")[0] if "/" in api_version else ""


def _cond(ctype: str, ok: bool, reason: str, message: str) -> Obj:
    return {"type": ctype, "status": "True" if ok else "False", "reason": reason, "message": message}


class HPAController(TimedController):
    name = NAME
    workers = 5  # --concurrent-horizontal-pod-autoscaler-syncs

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        sync_period: float = 15.0,
        tolerance: float = 0.1,
        **kw: Any,
    ) -> None:
        self.sync_period = sync_period
        self.tolerance = tolerance
        self._recommendations: dict[str, list[Recommendation]] = {}
        self._events: dict[str, list[ScaleEvent]] = {}
        clock = clock or Clock()
        # kube's event source for this controller
        kw.setdefault("recorder", EventRecorder(client, "horizontal-pod-autoscaler", clock=clock))
        super().__init__(client, clock=clock, metrics=metrics, **kw)

    def setup(self) -> None:
        self.hpas: Informer = self.informers.informer(HPAS)
        self.hpas.add_event_handler(
            lambda o: self.enqueue(_key(o)),
            lambda old, new: self.enqueue(_key(new)),
            lambda o: self.enqueue(_key(o)),
        )

    async def on_synced(self) -> None:
        for hpa in self.hpas.list():
            self.enqueue(_key(hpa))

    async def sync(self, key: str) -> None:
        ns, name = split_key(key)
        hpa = self.hpas.get_by_name(ns, name)
        if hpa is None:
            self._recommendations.pop(key, None)
            self._events.pop(key, None)
            self.timers.cancel(key)
            return
        try:
            await self._reconcile(key, hpa)
        finally:
            self.timers.schedule(key, self.clock.monotonic() + self.sync_period)

    async def _reconcile(self, key: str, hpa: Obj) -> None:
        ns = as_dict(hpa.get("metadata")).get("namespace", "")
        spec = as_dict(hpa.get("spec"))
        ref = as_dict(spec.get("scaleTargetRef"))
        old_status = as_dict(hpa.get("status"))
        gvr = SCALABLE.get((_group_of(str(ref.get("apiVersion") or "")), str(ref.get("kind") or "")))
        conditions: list[Obj] = []
        if gvr is None:
            msg = f'the HPA controller was unable to get the target\'s current scale: no matches for kind "{ref.get("kind")}" in group "{_group_of(str(ref.get("apiVersion") or ""))}"'
            self.recorder.event(hpa, "Warning", "FailedGetScale", msg)
            await self._write_status(
                hpa, old_status, [_cond("AbleToScale", False, "FailedGetScale", msg)], {}
            )
            return
        try:
            scale = await self.client.get_subresource(gvr, str(ref.get("name")), "scale", ns)
        except errors.StatusError as e:
            msg = f"the HPA controller was unable to get the target's current scale: {e.message}"
            self.recorder.event(hpa, "Warning", "FailedGetScale", msg)
            await self._write_status(
                hpa, old_status, [_cond("AbleToScale", False, "FailedGetScale", msg)], {}
            )
            return
        current = int(as_dict(scale.get("spec")).get("replicas") or 0)
        selector = str(as_dict(scale.get("status")).get("selector") or "")
        now, mono = self.clock.now(), self.clock.monotonic()
        fields: dict[str, Any] = {"currentReplicas": int(as_dict(scale.get("status")).get("replicas") or 0)}
        if current == 0 and int(spec.get("minReplicas", 1) or 0) != 0:
            conditions = [
                _cond(
                    "AbleToScale",
                    True,
                    "SucceededGetScale",
                    "the HPA controller was able to get the target's current scale",
                ),
                _cond(
                    "ScalingActive",
                    False,
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero",
                ),
            ]
            fields["desiredReplicas"] = 0
            await self._write_status(hpa, old_status, conditions, fields)
            return
        proposed, metric_status, reason, failure = await self._compute(ns, selector, current, spec)
        if failure is not None:
            ctype_reason, msg = failure
            self.recorder.event(hpa, "Warning", ctype_reason, msg)
            self.recorder.event(
                hpa,
                "Warning",
                "FailedComputeMetricsReplicas",
                f"invalid metrics ({len(as_list(spec.get('metrics')))} invalid out of {len(as_list(spec.get('metrics')))}), first error is: {msg}",
            )
            conditions = [
                _cond(
                    "AbleToScale",
                    True,
                    "SucceededGetScale",
                    "the HPA controller was able to get the target's current scale",
                ),
                _cond(
                    "ScalingActive",
                    False,
                    ctype_reason,
                    f"the HPA was unable to compute the replica count: {msg}",
                ),
            ]
            fields["desiredReplicas"] = current
            await self._write_status(hpa, old_status, conditions, fields)
            return
        history = [r for r in self._recommendations.get(key, []) if r.at > mono - HISTORY]
        events = [e for e in self._events.get(key, []) if e.at > mono - HISTORY]
        desired, limited, stabilized = normalize(current, proposed, spec, history, events, mono)
        history.append(Recommendation(mono, proposed))
        self._recommendations[key] = history
        fields["desiredReplicas"] = desired
        fields["currentMetrics"] = metric_status
        able = _cond("AbleToScale", True, "ReadyForNewScale", "recommended size matches current size")
        if stabilized:
            able = _cond("AbleToScale", True, stabilized, STABILIZED_MESSAGES[stabilized])
        if desired != current:
            scale = {**scale, "spec": {**as_dict(scale.get("spec")), "replicas": desired}}
            try:
                await self.client.update_subresource(gvr, str(ref.get("name")), "scale", scale, ns)
            except errors.StatusError as e:
                msg = f"the HPA controller was unable to update the target scale: {e.message}"
                self.recorder.event(
                    hpa,
                    "Warning",
                    "FailedRescale",
                    f"New size: {desired}; reason: {reason}; error: {e.message}",
                )
                conditions = [_cond("AbleToScale", False, "FailedUpdateScale", msg)]
                await self._write_status(hpa, old_status, conditions, fields)
                return
            events.append(ScaleEvent(mono, desired - current))
            self._events[key] = events
            self.recorder.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            able = _cond(
                "AbleToScale",
                True,
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            fields["lastScaleTime"] = rfc3339(now)
        conditions = [
            able,
            _cond(
                "ScalingActive",
                True,
                "ValidMetricFound",
                f"the HPA was able to successfully calculate a replica count from {self._metric_name(spec)}",
            ),
            _cond("ScalingLimited", True, limited, LIMITED_MESSAGES[limited])
            if limited
            else _cond(
                "ScalingLimited",
                False,
                "DesiredWithinRange",
                "the desired count is within the acceptable range",
            ),
        ]
        await self._write_status(hpa, old_status, conditions, fields)

    @staticmethod
    def _metric_name(spec: Obj) -> str:
        first = as_dict((as_list(spec.get("metrics")) or [{}])[0])
        res = as_dict(first.get("resource"))
        kind = as_dict(res.get("target")).get("type")
        return (
            f"{res.get('name')} resource utilization (percentage of request)"
            if kind == "Utilization"
            else f"{res.get('name')} resource"
        )

    async def _compute(
        self, ns: str, selector: str, current: int, spec: Obj
    ) -> tuple[int, list[Obj], str, tuple[str, str] | None]:
        """(replicas, currentMetrics, the rescale reason, a failure (reason, message) or None)."""
        pods = (await self.client.list(PODS, ns, label_selector=selector))["items"]
        metrics = (await self.client.list(POD_METRICS, ns, label_selector=selector))["items"]
        best = -1
        reason = ""
        statuses: list[Obj] = []
        for m in as_list(spec.get("metrics")):
            m = as_dict(m)
            if m.get("type") != "Resource":
                return (
                    current,
                    [],
                    "",
                    (
                        "FailedGetExternalMetric" if m.get("type") == "External" else "FailedGetPodsMetric",
                        f"unable to get {str(m.get('type')).lower()} metric: gangplane's metrics API serves resource metrics only",
                    ),
                )
            res = as_dict(m.get("resource"))
            rname = str(res.get("name") or "")
            target = as_dict(res.get("target"))
            try:
                if target.get("type") == "Utilization":
                    goal = int(target.get("averageUtilization") or 0)
                    got = replicas_for(
                        current, pods, metrics, rname, utilization=goal, tolerance=self.tolerance
                    )
                    current_value: Obj = {
                        "averageUtilization": got.utilization,
                        "averageValue": _format(rname, got.average),
                    }
                    direction = "above" if (got.utilization or 0) > goal else "below"
                    why = f"{rname} resource utilization (percentage of request) {direction} target"
                else:
                    goal_value = parse_quantity(target.get("averageValue") or "0")
                    got = replicas_for(
                        current, pods, metrics, rname, average_value=goal_value, tolerance=self.tolerance
                    )
                    current_value = {"averageValue": _format(rname, got.average)}
                    why = f"{rname} resource {'above' if got.average > goal_value else 'below'} target"
            except MetricsError as e:
                return current, [], "", ("FailedGetResourceMetric", f"failed to get {rname} utilization: {e}")
            statuses.append({"type": "Resource", "resource": {"name": rname, "current": current_value}})
            if got.replicas > best:
                best, reason = got.replicas, why
        if best < 0:
            best = current
        if len(statuses) > 1 and best < current:
            reason = "All metrics below target"
        return best, statuses, reason, None

    async def _write_status(self, hpa: Obj, old: Obj, conditions: list[Obj], fields: dict[str, Any]) -> None:
        ts = rfc3339(self.clock.now())
        before = {c.get("type"): c for c in as_list(old.get("conditions"))}
        merged = []
        for c in conditions:
            prev = before.get(c["type"])
            c = {
                **c,
                "lastTransitionTime": prev.get("lastTransitionTime")
                if prev and prev.get("status") == c["status"]
                else ts,
            }
            merged.append(c)
        seen = {c["type"] for c in merged}
        merged.extend(c for c in as_list(old.get("conditions")) if c.get("type") not in seen)
        status = {k: v for k, v in old.items() if k not in ("conditions",)}
        status.update(fields)
        status["conditions"] = merged
        generation = as_dict(hpa.get("metadata")).get("generation")
        if generation is not None:
            status["observedGeneration"] = generation
        if status == old:
            return
        try:
            await self.client.update_status(
                HPAS, {**hpa, "status": status}, as_dict(hpa.get("metadata")).get("namespace", "")
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):
                raise


def _key(hpa: Obj) -> str:
    md = as_dict(hpa.get("metadata"))
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


def _format(resource: str, value: Fraction) -> str:
    if resource == "cpu":
        return f"{int(value * 1000)}m"
    return f"{int(value) // (1024 * 1024)}Mi" if value >= 1024 * 1024 else str(int(value))


__all__ = ["HPAController", "NAME"]
