"""Strategy of apiregistration.k8s.io/v1 APIService (kube-aggregator's ``registry/apiservice``).

gangplane serves every API itself, so the APIServices it lists are the *local* ones the
aggregator's autoregister controller creates for each served group-version (``v1.``,
``v1.apps``, …): no ``spec.service``, Available with reason ``Local``. A client may create its
own; one naming a Service is stored and validated, but gangplane proxies nothing to it, so it
gets no Available condition. The name must be ``<version>.<group>`` and kube's strategy refuses
unconditional updates.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names

GROUP = "apiregistration.k8s.io"
LOCAL_AVAILABLE = {
    "type": "Available",
    "status": "True",
    "reason": "Local",
    "message": "Local APIServices are always available",
}


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def validate_api_service(obj: Obj) -> ErrorList:
    """``ValidateAPIService`` (the name rule is part of the metadata name check upstream)."""
    spec = _dict(obj.get("spec"))
    sp = Path("spec")
    group = spec.get("group") or ""
    version = spec.get("version") or ""
    errs: ErrorList = []
    name = _dict(obj.get("metadata")).get("name") or ""
    required_name = f"{version}.{group}"
    if name and not names.is_valid_path_segment_name(name) and name != required_name:
        errs.append(
            field.invalid(
                Path("metadata", "name"), name, f'must be `spec.version+"."+spec.group`: "{required_name}"'
            )
        )
    if not group and version != "v1":
        errs.append(
            field.required(sp.child("group"), "only v1 may have an empty group and it better be legacy kube")
        )
    if group:
        errs.extend(field.invalid(sp.child("group"), group, m) for m in names.is_dns1123_subdomain(group))
    errs.extend(field.invalid(sp.child("version"), version, m) for m in names.is_dns1035_label(version))
    gpm = _int(spec.get("groupPriorityMinimum"))
    if gpm <= 0 or gpm > 20000:
        errs.append(
            field.invalid(sp.child("groupPriorityMinimum"), gpm, "must be positive and less than 20000")
        )
    vp = _int(spec.get("versionPriority"))
    if vp <= 0 or vp > 1000:
        errs.append(field.invalid(sp.child("versionPriority"), vp, "must be positive and less than 1000"))
    service = spec.get("service")
    ca = spec.get("caBundle") or ""
    skip = spec.get("insecureSkipTLSVerify") is True
    if service is None:
        if ca:
            errs.append(
                field.invalid(
                    sp.child("caBundle"), f"{len(ca)} bytes", "local APIServices may not have a caBundle"
                )
            )
        if skip:
            errs.append(
                field.invalid(
                    sp.child("insecureSkipTLSVerify"),
                    True,
                    "local APIServices may not have insecureSkipTLSVerify",
                )
            )
        return errs
    svc = _dict(service)
    if not svc.get("namespace"):
        errs.append(field.required(sp.child("service", "namespace")))
    if not svc.get("name"):
        errs.append(field.required(sp.child("service", "name")))
    port = svc.get("port")
    if isinstance(port, int) and not isinstance(port, bool):
        errs.extend(
            field.invalid(sp.child("service", "port"), port, m) for m in names.is_valid_port_num(port)
        )
    if skip and ca:
        errs.append(
            field.invalid(sp.child("insecureSkipTLSVerify"), True, "may not be true if caBundle is present")
        )
    return errs


class APIServiceStrategy(Strategy):
    has_status = True
    allow_unconditional_update = False

    def default(self, obj: Obj) -> None:
        svc = _dict(obj.get("spec")).get("service")
        if isinstance(svc, dict) and svc.get("port") is None:
            svc["port"] = 443

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {}
        if _dict(obj.get("spec")).get("service") is None:
            obj["status"] = {"conditions": [{**LOCAL_AVAILABLE, "lastTransitionTime": ctx.now}]}

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_api_service(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_api_service(new)

    tracks_generation = False

    def generation_relevant(self, obj: Obj) -> Any:
        return None


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "apiservices"): APIServiceStrategy(),
}
