"""The request's authorizer for CEL's ``authorizer`` library while admission evaluates expressions.

``authorizer.group(…).resource(…).check(verb)`` asks the API server's authorizer whether the
*requesting user* may do that (``authorizer.serviceAccount(ns, name)`` asks for that service
account instead), as kube's admission CEL does. An API without an authorizer (in-process, no
front door) allows everything, as ``--authorization-mode=AlwaysAllow`` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from apiserver.admission import Attributes
from apiserver.api.users import LOOPBACK, UserInfo
from apiserver.auth.attributes import Attributes as AuthzAttributes
from apiserver.auth.authorizer import Decision
from apiserver.cel.authz import CURRENT_CHECKER, authorizer_value


def request_resource(attrs: Attributes) -> dict[str, str]:
    rd = attrs.rd
    return {
        "group": rd.group,
        "resource": rd.plural,
        "subresource": attrs.subresource,
        "namespace": attrs.namespace,
        "name": attrs.name,
    }


def authorizer_for(attrs: Attributes) -> dict[str, Any]:
    """The ``authorizer`` variable of this request."""
    return authorizer_value(request_resource(attrs))


def _service_account(namespace: str, name: str) -> UserInfo:
    return UserInfo(
        f"system:serviceaccount:{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"),
    )


@contextmanager
def authorizing(attrs: Attributes, api: Any) -> Iterator[None]:
    """Make ``check`` ask ``api``'s authorizer about ``attrs``' user while the block runs."""
    authorization = getattr(api, "authorization", None)
    user = attrs.user or LOOPBACK

    def check(target: dict[str, Any], verb: str) -> tuple[bool, str, str]:
        if authorization is None:
            return True, "", ""
        sa = target.get("serviceAccount")
        subject = _service_account(str(sa[0]), str(sa[1])) if isinstance(sa, list) and len(sa) == 2 else user
        if "path" in target:
            a = AuthzAttributes(subject, verb.lower(), False, path=str(target.get("path") or ""))
        else:
            a = AuthzAttributes(
                subject,
                verb,
                True,
                namespace=str(target.get("namespace") or ""),
                api_group=str(target.get("group") or ""),
                resource=str(target.get("resource") or ""),
                subresource=str(target.get("subresource") or ""),
                name=str(target.get("name") or ""),
            )
        decision, reason = authorization.authorize(a)
        return decision is Decision.ALLOW, reason, ""

    token = CURRENT_CHECKER.set(check)
    try:
        yield
    finally:
        CURRENT_CHECKER.reset(token)
