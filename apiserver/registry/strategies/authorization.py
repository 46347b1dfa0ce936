"""authorization.k8s.io/v1 reviews: SelfSubjectAccessReview, SelfSubjectRulesReview,
SubjectAccessReview and LocalSubjectAccessReview (kube's ``pkg/registry/authorization``).

These are create-only and never stored: the server validates the request, fills ``status`` with
the decision of the server's own authorizer (``ctx.authorization``, the one that decides HTTP
requests) and returns the object (201). Under ``--authorization-mode=AlwaysAllow`` everything is
allowed and a rules review lists ``*`` rules, as kube-apiserver answers in that mode; under RBAC
the answer comes from the stored roles and bindings, with RBAC's reason (``RBAC: allowed by
ClusterRoleBinding …``). The self reviews ask about the caller (after impersonation, so
``kubectl auth can-i --as=…`` asks about the impersonated user); SubjectAccessReviews about the
user, groups, uid and extra they name.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors, field
from apiserver.api.users import LOOPBACK, UserInfo
from apiserver.auth.attributes import Attributes
from apiserver.auth.authorizer import Decision, RulesReview, always_allow_rules
from apiserver.field import ErrorList, Path
from apiserver.rest.strategy import Obj, Strategy, StrategyContext

GROUP = "authorization.k8s.io"


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


def _strs(v: Any) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []


def review_attributes(user: UserInfo, spec: Obj) -> Attributes:
    """``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``."""
    ra = spec.get("resourceAttributes")
    if isinstance(ra, dict):
        return Attributes(
            user,
            str(ra.get("verb") or ""),
            True,
            namespace=str(ra.get("namespace") or ""),
            api_group=str(ra.get("group") or ""),
            api_version=str(ra.get("version") or "*"),
            resource=str(ra.get("resource") or ""),
            subresource=str(ra.get("subresource") or ""),
            name=str(ra.get("name") or ""),
        )
    nra = _dict(spec.get("nonResourceAttributes"))
    return Attributes(user, str(nra.get("verb") or ""), False, path=str(nra.get("path") or ""))


def spec_user(spec: Obj) -> UserInfo:
    """The identity a SubjectAccessReview names (its groups as given: nothing is added)."""
    extra = {str(k): _strs(v) for k, v in _dict(spec.get("extra")).items()}
    return UserInfo(
        str(spec.get("user") or ""), tuple(_strs(spec.get("groups"))), str(spec.get("uid") or ""), extra
    )


def decide(ctx: StrategyContext, attrs: Attributes) -> Obj:
    """The ``SubjectAccessReviewStatus`` of the server's authorizer for ``attrs``."""
    if ctx.authorization is None:
        return {"allowed": True}
    decision, reason = ctx.authorization.authorize(attrs)
    status: Obj = {"allowed": decision is Decision.ALLOW}
    if decision is Decision.DENY:
        status["denied"] = True
    if reason:
        status["reason"] = reason
    return status


class _ReviewStrategy(Strategy):
    """A create-only kind answered in place of being stored (see :meth:`answer`)."""

    answers_create = True

    def subject(self, ctx: StrategyContext, spec: Obj) -> UserInfo:
        """Whom the review asks about: the caller (self reviews)."""
        return ctx.user or LOOPBACK

    def answer(self, ctx: StrategyContext, obj: Obj) -> Obj:
        """The ``status`` the authorizer gives for ``obj``."""
        spec = _dict(obj.get("spec"))
        return decide(ctx, review_attributes(self.subject(ctx, spec), spec))


class SelfSubjectAccessReviewStrategy(_ReviewStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return _empty_meta_errors(obj) + _attributes_errors(_dict(obj.get("spec")), Path("spec"))


class SubjectAccessReviewStrategy(_ReviewStrategy):
    def subject(self, ctx: StrategyContext, spec: Obj) -> UserInfo:
        return spec_user(spec)

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
        namespace = str(_dict(obj.get("spec")).get("namespace") or "")
        if ctx.authorization is None:
            review: RulesReview = always_allow_rules()
        else:
            review = ctx.authorization.rules_for(ctx.user or LOOPBACK, namespace)
        return review.to_api()


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "selfsubjectaccessreviews"): SelfSubjectAccessReviewStrategy(),
    (GROUP, "selfsubjectrulesreviews"): SelfSubjectRulesReviewStrategy(),
    (GROUP, "subjectaccessreviews"): SubjectAccessReviewStrategy(),
    (GROUP, "localsubjectaccessreviews"): LocalSubjectAccessReviewStrategy(),
}
