"""The ValidatingAdmissionPolicy status controller (kube-controller-manager's
``validatingadmissionpolicy-status-controller``): ``status.observedGeneration`` and
``status.typeChecking`` of every policy.

kube type-checks each expression of a policy against the kinds its ``matchConstraints`` name
(exact groups, versions and resources; a wildcard rule is not checked) and lists what fails in
``typeChecking.expressionWarnings`` (``fieldRef`` ``spec.validations[0].expression``, the warning
as cel-go words it). gangplane's check covers field references
(:mod:`apiserver.cel.fieldcheck`: ``object.spec.replicass`` on a StatefulSet) and operators
applied to operand types with no overload (:mod:`apiserver.cel.typecheck`:
``object.spec.serviceName == 1``). Built-in kinds are checked with the served OpenAPI schemas;
custom resources against their CRD's structural schema. An empty ``typeChecking: {}`` says the check ran and found
nothing, as in kube.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.cel.fieldcheck import issue_lines, undefined_fields
from apiserver.cel.typecheck import type_errors
from apiserver.client.context import ComponentContext
from apiserver.client.discovery import APIResource
from apiserver.client.interface import GVR
from apiserver.openapi.schema import definition_name_for, definitions, resolve
from controllers.base import Controller
from controllers.metrics import controller_metrics

NAME = "validatingadmissionpolicy-status-controller"
VALIDATING_ADMISSION_POLICIES = GVR("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies")
CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
#: what a custom resource's schema leaves implicit and CEL still sees (kube's embedded metadata)
_IMPLICIT = {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
}
#: (group, plural) -> (kind, {version: root schema}) of the custom resources
CustomKinds = dict[tuple[str, str], tuple[str, dict[str, Obj]]]


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def checked_kinds(policy: Obj, kinds: dict[tuple[str, str], str]) -> list[tuple[str, str, str]]:
    """(group, version, kind) the policy's resource rules name exactly, in rule order."""
    out: list[tuple[str, str, str]] = []
    mc = _dict(_dict(policy.get("spec")).get("matchConstraints"))
    for rule in _list(mc.get("resourceRules")):
        rule = _dict(rule)
        for group in _list(rule.get("apiGroups")):
            for version in _list(rule.get("apiVersions")):
                for resource in _list(rule.get("resources")):
                    if "*" in (group, version) or "*" in str(resource) or "/" in str(resource):
                        continue
                    kind = kinds.get((str(group), str(resource)))
                    if kind and (group, version, kind) not in out:
                        out.append((str(group), str(version), kind))
    return out


def expressions(policy: Obj) -> list[tuple[str, str]]:
    """(fieldRef, expression) of every CEL expression of the policy."""
    spec = _dict(policy.get("spec"))
    out: list[tuple[str, str]] = []
    for key, fields in (
        ("validations", ("expression", "messageExpression")),
        ("matchConditions", ("expression",)),
        ("variables", ("expression",)),
        ("auditAnnotations", ("valueExpression",)),
    ):
        for i, item in enumerate(_list(spec.get(key))):
            for f in fields:
                expr = _dict(item).get(f)
                if isinstance(expr, str) and expr.strip():
                    out.append((f"spec.{key}[{i}].{f}", expr))
    return out


def custom_kinds(crds: list[Obj]) -> CustomKinds:
    """Each CRD's kind and the structural schema of each served version, as CEL sees the object
    (``apiVersion``, ``kind`` and ``metadata`` added where the schema leaves them out)."""
    out: CustomKinds = {}
    for crd in crds:
        spec = _dict(crd.get("spec"))
        names = _dict(spec.get("names"))
        schemas: dict[str, Obj] = {}
        for v in _list(spec.get("versions")):
            v = _dict(v)
            root = _dict(
                _dict(v.get("schema")).get("openAPIV3Schema")
                or _dict(spec.get("validation")).get("openAPIV3Schema")
            )
            if not v.get("served") or not root:
                continue
            props = {**_IMPLICIT, **_dict(root.get("properties"))}
            schemas[str(v.get("name"))] = {**root, "properties": props}
        if spec.get("group") and names.get("plural") and names.get("kind"):
            out[(str(spec["group"]), str(names["plural"]))] = (str(names["kind"]), schemas)
    return out


def type_checking(policy: Obj, kinds: dict[tuple[str, str], str], custom: CustomKinds | None = None) -> Obj:
    """The policy's ``status.typeChecking``: built-in kinds against the served OpenAPI schemas,
    custom kinds (``custom``) against their CRD's structural schema."""
    defs = definitions()
    custom = custom or {}
    all_kinds = {**kinds, **{gr: kind for gr, (kind, _) in custom.items()}}
    by_kind = {(gr[0], kind): schemas for gr, (kind, schemas) in custom.items()}
    targets = []
    for group, version, kind in checked_kinds(policy, all_kinds):
        gvk = f"{group}/{version}, Kind={kind}" if group else f"{version}, Kind={kind}"
        schema = by_kind.get((group, kind), {}).get(version)
        if schema is None:
            name = definition_name_for(group, version, kind)
            schema = defs[name] if name is not None else None
        if schema is not None:
            targets.append((gvk, schema))
    warnings: list[Obj] = []
    for field_ref, expr in expressions(policy):
        lines: list[str] = []
        for gvk, schema in targets:
            issues = [
                (col - 1, f"undefined field '{name}'")
                for name, col in undefined_fields(expr, schema, resolve)
            ]
            issues += type_errors(expr, schema, resolve)
            lines += issue_lines(gvk, expr, issues)
        if lines:
            warnings.append({"fieldRef": field_ref, "warning": "\n".join(lines)})
    return {"expressionWarnings": warnings} if warnings else {}


class AdmissionPolicyStatusController(Controller):
    name = NAME

    def __init__(self, client: Any, resources: list[APIResource], **kw: Any) -> None:
        super().__init__(client, **kw)
        self.kinds = {(r.gvr.group, r.gvr.resource): r.kind for r in resources}

    def setup(self) -> None:
        self.policies = self.informers.informer(VALIDATING_ADMISSION_POLICIES)
        self.policies.add_event_handler(self._enqueue, lambda old, new: self._enqueue(new), None)
        # a policy on a custom kind is checked again when its CRD comes, changes or goes
        self.crds = self.informers.informer(CRDS)
        self.crds.add_event_handler(self._all, lambda old, new: self._all(new), self._all)

    def _all(self, _crd: Obj) -> None:
        for policy in self.policies.list():
            self._enqueue(policy)

    def _enqueue(self, obj: Obj) -> None:
        self.enqueue(obj["metadata"]["name"])

    async def sync(self, key: str) -> None:
        policy = self.policies.get(key)
        if policy is None:
            return
        generation = _dict(policy.get("metadata")).get("generation")
        status = _dict(policy.get("status"))
        checked = type_checking(policy, self.kinds, custom_kinds(self.crds.list()))
        if status.get("observedGeneration") == generation and status.get("typeChecking") == checked:
            return
        new_status = {**status, "observedGeneration": generation, "typeChecking": checked}
        body = {**policy, "status": new_status}
        try:
            await self.client.update_status(VALIDATING_ADMISSION_POLICIES, body, field_manager=NAME)
        except errors.StatusError as e:
            if e.code in (404, 409):
                if e.code == 409:
                    self.enqueue(key)
                return
            raise


def new_admission_policy_status_controller(ctx: ComponentContext) -> AdmissionPolicyStatusController:
    return AdmissionPolicyStatusController(
        ctx.client(NAME),
        ctx.served_resources(),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )
