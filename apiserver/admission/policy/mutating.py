"""MutatingAdmissionPolicy: CEL mutations bound to requests by MutatingAdmissionPolicyBindings
(kube's ``admission/plugin/policy/mutating``).

Each matching (policy, binding, params) applies the policy's ``mutations`` in order, each seeing
the object as the previous one left it:

* ``ApplyConfiguration``: the expression builds a partial object (``Object{metadata:
  Object.metadata{labels: {"a": "b"}}}``) merged into the object the way server-side apply merges
  an apply configuration: maps field by field, keyed lists (containers by ``name`` …) item by
  item, other lists replaced. gangplane merges with the resource's strategic-merge schema (a custom
  resource: JSON merge), which has the same list keys.
* ``JSONPatch``: the expression returns ``[JSONPatch{op: "add", path: "/spec/x", value: 1}, …]``,
  applied as an RFC 6902 patch.

The object's identity (name, namespace, uid, resourceVersion, generation, creationTimestamp) is
kept. A mutation that fails is refused under ``failurePolicy: Fail`` (``MutatingAdmissionPolicy
'P' with binding 'B' denied request: …``) and skipped under ``Ignore``. With ``reinvocationPolicy:
IfNeeded`` a policy runs once more when the object changed after it ran (a later policy or a
mutating webhook changed it), as kube reinvokes it (:meth:`reinvoke`, called by the registry
after every mutating plugin ran).
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import errors
from apiserver.admission import Attributes, Plugin
from apiserver.admission.policy.authorizing import authorizing
from apiserver.admission.policy.engine import (
    Evaluation,
    evaluate,
    may_apply,
    may_apply_to,
    pairings,
    policy_denied,
)
from apiserver.admission.policy.matching import PolicyLookup
from apiserver.admission.policy.request import (
    attrs_stored,
    attrs_view,
    keep_protected,
    object_digest,
    replace_in_place,
)
from apiserver.api.types import Obj
from apiserver.cel import CompileError, EvalError
from apiserver.patch.jsonpatch_merge import json_patch, merge_patch
from apiserver.rest.resources import ResourceDef

STRATEGIC_PATCH = "application/strategic-merge-patch+json"


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _name(obj: dict[str, Any]) -> str:
    return str(_dict(obj.get("metadata")).get("name") or "")


class MutationError(Exception):
    pass


def apply_configuration(
    api: Any, attrs: Attributes, current: Obj, config: Any, matched: ResourceDef | None = None
) -> Obj:
    """``config`` merged into ``current`` (which is in the ``matched`` version's shape)."""
    if not isinstance(config, dict):
        raise MutationError("applyConfiguration must evaluate to an object")
    rd = matched or attrs.rd
    smp = getattr(api, "patchers", {}).get(STRATEGIC_PATCH)
    try:
        # a subresource's own kind (a Scale) has no strategic-merge schema of the resource's
        if rd.strategic_merge and smp is not None and not attrs.subresource_kind:
            out = smp(rd, copy.deepcopy(current), config)
        else:
            out = merge_patch(current, config)
    except errors.StatusError as e:
        raise MutationError(e.message) from e
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
        raise MutationError(f"applyConfiguration could not be merged: {e}") from e
    if not isinstance(out, dict):
        raise MutationError("applyConfiguration did not produce an object")
    return out


def apply_json_patch(current: Obj, ops: Any) -> Obj:
    if not isinstance(ops, list):
        raise MutationError("jsonPatch must evaluate to a list of JSONPatch values")
    try:
        out = json_patch(copy.deepcopy(current), ops)
    except errors.StatusError as e:
        raise MutationError(e.message) from e
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
        raise MutationError(f"jsonPatch could not be applied: {e}") from e
    if not isinstance(out, dict):
        raise MutationError("the patch did not produce an object")
    return out


def mutate(ev: Evaluation, api: Any, attrs: Attributes, current: Obj) -> Obj:
    """The object after the policy's mutations (raises MutationError / EvalError)."""
    for raw in _list(_dict(ev.policy.get("spec")).get("mutations")):
        m = _dict(raw)
        ev.activation["object"] = current
        if m.get("patchType") == "JSONPatch":
            ops = evaluate(str(_dict(m.get("jsonPatch")).get("expression") or ""), ev.activation)
            current = apply_json_patch(current, ops)
        else:
            config = evaluate(str(_dict(m.get("applyConfiguration")).get("expression") or ""), ev.activation)
            current = apply_configuration(api, attrs, current, config, ev.matched)
    return current


class MutatingAdmissionPolicyPlugin(Plugin):
    """The ``MutatingAdmissionPolicy`` admission plugin (mutating phase)."""

    name = "MutatingAdmissionPolicy"

    def admit(self, attrs: Attributes, api: Any) -> None:
        if attrs.obj is None or attrs.operation not in ("CREATE", "UPDATE"):
            return
        if not may_apply(attrs, api, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"):
            return
        with authorizing(attrs, api):
            self._admit(attrs, api)

    def admits_nothing(self, operation: str, rd: ResourceDef, api: Any) -> bool:
        """No policy or no binding stored (``may_apply``'s two counts), or an operation it
        never mutates."""
        return operation not in ("CREATE", "UPDATE") or not may_apply_to(
            rd, api, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"
        )

    def _admit(self, attrs: Attributes, api: Any) -> None:
        lookup: PolicyLookup = api
        found = pairings(attrs, lookup, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings")
        if found is None:
            return
        for policy, binding, message in found.errors:
            raise policy_denied(
                attrs,
                f"MutatingAdmissionPolicy '{_name(policy)}' with binding '{_name(binding)}' denied request: {message}",
            )
        if not found.evaluations:
            return
        for ev in found.evaluations:
            self._apply(ev, api, attrs)
            if _dict(ev.policy.get("spec")).get("reinvocationPolicy") == "IfNeeded":
                attrs.reinvocations.setdefault(self.name, []).append((ev, object_digest(attrs.obj)))

    def reinvoke(self, attrs: Attributes, api: Any) -> None:
        """kube's reinvocation: an IfNeeded policy runs once more if the object changed after it ran
        (by a later policy or a mutating webhook)."""
        entries = attrs.reinvocations.pop(self.name, [])
        if not entries or attrs.obj is None:
            return
        final = object_digest(attrs.obj)
        with authorizing(attrs, api):
            for ev, digest in entries:
                if digest != final:
                    self._apply(ev, api, attrs)

    def _apply(self, ev: Evaluation, api: Any, attrs: Attributes) -> None:
        """Run one (policy, binding, param) on the object as it is now and store the result in place."""
        before = attrs.obj or {}
        current = attrs_view(api, attrs, before, ev.matched) or {}
        out = self._run(ev, api, attrs, current)
        keep_protected(out, before)
        stored = attrs_stored(api, attrs, out, ev.matched)
        if stored != before:
            replace_in_place(before, stored)

    def _run(self, ev: Evaluation, api: Any, attrs: Attributes, current: Obj) -> Obj:
        try:
            return mutate(ev, api, attrs, current)
        except (EvalError, CompileError, MutationError) as e:
            if ev.failure_policy != "Fail":
                return current
            raise policy_denied(
                attrs,
                f"MutatingAdmissionPolicy '{_name(ev.policy)}' with binding '{_name(ev.binding)}' denied request: {e}",
            ) from e
