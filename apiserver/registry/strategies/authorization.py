"""authorization.k8s.io/v1 reviews: SelfSubjectAccessReview, SelfSubjectRulesReview,
SubjectAccessReview and LocalSubjectAccessReview (kube's ``pkg/registry/authorization``).

These are create-only and never stored: the server validates the request, fills ``status`` with
its decision and returns the object (201). gangplane has no authentication and no authorizer —
every request is allowed, like kube-apiserver with ``--authorization-mode=AlwaysAllow``. So the
answers say that truthfully: ``allowed: true`` with :data:`ALLOWED_REASON`, and a rules review
lists ``*`` rules, complete (``incomplete: false``). This makes ``kubectl auth can-i`` answer
``yes`` and ``kubectl auth can-i --list`` print the wildcard rules.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors, field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategy import Obj, Strategy, StrategyContext

GROUP = "authorization.k8s.io"
ALLOWED_REASON = "gangplane authorizes every request: no authorizer is configured (AlwaysAllow)"


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _attributes_errors(spec: Obj, path: Path) -> ErrorList:
    """Exactly one of resourceAttributes / nonResourceAttributes."""
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if ra is not None and nra is not None:
        return [
            field.invalid(
                path.child("nonResourceAttributes"),
                nra,
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if ra is None and nra is None:
        return [
            field.invalid(
                path.child("resourceAttributes"),
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        ]
    return []


def _empty_meta_errors(obj: Obj) -> ErrorList:
    """Reviews carry no metadata (``ObjectMeta`` must be the zero value)."""
    md = {k: v for k, v in _dict(obj.get("metadata")).items() if v not in (None, "", {}, [])}
    if md:
        return [field.invalid(Path("metadata"), md, "must be empty")]
    return []


class _ReviewStrategy(Strategy):
    """A create-only kind answered in place of being stored (see :meth:`answer`)."""

    answers_create = True

    def answer(self, ctx: StrategyContext, obj: Obj) -> Obj:
        """The ``status`` the authorizer gives for ``obj``."""
        return {"allowed": True, "reason": ALLOWED_REASON}


class SelfSubjectAccessReviewStrategy(_ReviewStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return _empty_meta_errors(obj) + _attributes_errors(_dict(obj.get("spec")), Path("spec"))


class SubjectAccessReviewStrategy(_ReviewStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        spec = _dict(obj.get("spec"))
        errs = _empty_meta_errors(obj) + _attributes_errors(spec, Path("spec"))
        if not spec.get("user") and not spec.get("groups"):
            errs.append(
                field.invalid(
                    Path("spec", "user"),
                    spec.get("user") or "",
                    "at least one of user or group must be specified",
                )
            )
        return errs


class LocalSubjectAccessReviewStrategy(SubjectAccessReviewStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        spec = _dict(obj.get("spec"))
        md = {k: v for k, v in _dict(obj.get("metadata")).items() if k != "namespace"}
        errs = super().validate(ctx, {**obj, "metadata": md})
        ra = _dict(spec.get("resourceAttributes"))
        if spec.get("resourceAttributes") is not None and ra.get("namespace") != ctx.namespace:
            errs.append(
                field.invalid(
                    Path("spec", "resourceAttributes", "namespace"),
                    ra.get("namespace") or "",
                    "must match metadata.namespace",
                )
            )
        if spec.get("nonResourceAttributes") is not None:
            errs.append(
                field.invalid(
                    Path("spec", "nonResourceAttributes"),
                    spec["nonResourceAttributes"],
                    "disallowed on this kind of request",
                )
            )
        return errs


class SelfSubjectRulesReviewStrategy(_ReviewStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        if not _dict(obj.get("spec")).get("namespace"):
            raise errors.bad_request("no namespace on request")
        return []

    def answer(self, ctx: StrategyContext, obj: Obj) -> Obj:
        return {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "selfsubjectaccessreviews"): SelfSubjectAccessReviewStrategy(),
    (GROUP, "selfsubjectrulesreviews"): SelfSubjectRulesReviewStrategy(),
    (GROUP, "subjectaccessreviews"): SubjectAccessReviewStrategy(),
    (GROUP, "localsubjectaccessreviews"): LocalSubjectAccessReviewStrategy(),
}
