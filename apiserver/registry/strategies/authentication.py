"""authentication.k8s.io/v1 reviews: SelfSubjectReview and TokenReview (kube's ``pkg/registry/authentication``).

Create-only and never stored, like the authorization reviews: the answer is the object with its
``status`` filled in. SelfSubjectReview says who the caller is (``kubectl auth whoami``): the
identity the front door found (the kubeconfig's admin, ``system:anonymous``), or the loopback
admin for in-process callers. TokenReview authenticates ``spec.token`` with the server's own
authenticators, as kube's does for webhook-style callers.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.api.users import LOOPBACK
from apiserver.field import ErrorList, Path
from apiserver.registry.strategy import Obj, Strategy, StrategyContext

GROUP = "authentication.k8s.io"


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


class _Review(Strategy):
    answers_create = True


class SelfSubjectReviewStrategy(_Review):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return []

    def answer(self, ctx: StrategyContext, obj: Obj) -> Obj:
        user = ctx.user or LOOPBACK
        return {"userInfo": user.to_api()}


class TokenReviewStrategy(_Review):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        spec = obj.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("token"), str) or not spec["token"]:
            return [field.required(Path("spec", "token"), "")]
        return []

    def answer(self, ctx: StrategyContext, obj: Obj) -> Obj:
        token = _dict(obj.get("spec")).get("token", "")
        user = ctx.authenticate_token(token) if ctx.authenticate_token is not None else None
        if user is None:
            return {"authenticated": False, "user": {}, "error": "invalid bearer token"}
        audiences = _dict(obj.get("spec")).get("audiences")
        out: Obj = {"authenticated": True, "user": user.to_api()}
        if audiences:
            out["audiences"] = list(audiences)
        return out


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "selfsubjectreviews"): SelfSubjectReviewStrategy(),
    (GROUP, "tokenreviews"): TokenReviewStrategy(),
}
