"""authentication.k8s.io/v1 reviews: SelfSubjectReview and TokenReview (kube's ``pkg/registry/authentication``).

Create-only and never stored, like the authorization reviews: the answer is the object with its
``status`` filled in. SelfSubjectReview says who the caller is (``kubectl auth whoami``): the
identity the front door found (the kubeconfig's admin, ``system:anonymous``), or the loopback
admin for in-process callers; an impersonated identity when ``Impersonate-*`` was honoured.
TokenReview authenticates ``spec.token`` with the server's own authenticators, as kube's does for
webhook-style callers: bound service-account tokens for the audiences asked (the API server's by
default), and the kubeconfig's token, which is valid for the API server's audiences only.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.api.users import LOOPBACK
from apiserver.auth.serviceaccount import API_AUDIENCES, InvalidToken
from apiserver.field import ErrorList, Path
from apiserver.rest.strategy import Obj, Strategy, StrategyContext

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
        spec = _dict(obj.get("spec"))
        token = str(spec.get("token") or "")
        asked = spec.get("audiences")
        audiences = tuple(str(a) for a in asked) if isinstance(asked, list) and asked else API_AUDIENCES
        sa = ctx.service_account_tokens
        if sa is not None:
            try:
                user, valid_for = sa.authenticate(token, audiences)
            except InvalidToken as e:
                return {"authenticated": False, "user": {}, "error": f"[invalid bearer token, {e}]"}
            if user is not None:
                return {"authenticated": True, "user": user.to_api(), "audiences": valid_for}
        user = ctx.authenticate_token(token) if ctx.authenticate_token is not None else None
        # the server's other tokens are audience-agnostic: valid for the API server's own audiences
        valid_for = [a for a in audiences if a in API_AUDIENCES]
        if user is None or not valid_for:
            return {"authenticated": False, "user": {}, "error": "invalid bearer token"}
        return {"authenticated": True, "user": user.to_api(), "audiences": valid_for}


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "selfsubjectreviews"): SelfSubjectReviewStrategy(),
    (GROUP, "tokenreviews"): TokenReviewStrategy(),
}
