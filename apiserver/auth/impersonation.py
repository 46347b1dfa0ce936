"""``Impersonate-*`` headers, as kube's ``WithImpersonation`` filter handles them.

Each thing asked for (the user or service account, every group, every extra value, the uid) is
an ``impersonate`` request the *caller* must be authorized for; the first one refused answers
403 with kube's Forbidden message. The identity that results replaces the caller's for the rest
of the request, with ``system:authenticated`` (or ``system:unauthenticated`` for
``system:anonymous``) added as kube adds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from apiserver import errors
from apiserver.api.users import UserInfo
from apiserver.auth import rbac
from apiserver.auth.attributes import Attributes
from apiserver.auth.authorizer import Decision, forbidden

USER_HEADER = "impersonate-user"
GROUP_HEADER = "impersonate-group"
UID_HEADER = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"
ANONYMOUS = "system:anonymous"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"


@dataclass(frozen=True)
class Request:
    """One thing to impersonate: ``kind`` is User, ServiceAccount, Group, UserExtra or UID."""

    kind: str
    name: str
    namespace: str = ""
    extra_key: str = ""


def requests_from_headers(headers: Sequence[tuple[str, str]]) -> list[Request]:
    """``buildImpersonationRequests``; ``headers`` are (lower-cased name, value) pairs in order.

    Groups, extras or a uid without a user is a client mistake: kube answers it with a 500, here
    it is a 400 naming what was asked.
    """
    out: list[Request] = []
    users = [v for k, v in headers if k == USER_HEADER]
    user = users[0] if users else ""
    if user:
        sa = rbac.split_service_account_username(user)
        out.append(Request("ServiceAccount", sa[1], sa[0]) if sa else Request("User", user))
    groups = [Request("Group", v) for k, v in headers if k == GROUP_HEADER]
    extras = [
        Request("UserExtra", v, extra_key=unquote(k[len(EXTRA_PREFIX) :].lower()))
        for k, v in headers
        if k.startswith(EXTRA_PREFIX)
    ]
    uids = [v for k, v in headers if k == UID_HEADER]
    out.extend(groups)
    out.extend(extras)
    if uids and uids[0]:
        out.append(Request("UID", uids[0]))
    if (groups or extras or (uids and uids[0])) and not user:
        asked = ", ".join(f"{r.kind} {r.name!r}" for r in out)
        raise errors.bad_request(f"requested [{asked}] without impersonating a user")
    return out


def _attributes(requestor: UserInfo, req: Request) -> Attributes:
    if req.kind == "ServiceAccount":
        return Attributes(
            requestor, "impersonate", True, namespace=req.namespace, resource="serviceaccounts", name=req.name
        )
    if req.kind == "User":
        return Attributes(requestor, "impersonate", True, resource="users", name=req.name)
    if req.kind == "Group":
        return Attributes(requestor, "impersonate", True, resource="groups", name=req.name)
    if req.kind == "UserExtra":
        return Attributes(
            requestor,
            "impersonate",
            True,
            api_group=AUTHENTICATION_GROUP,
            api_version="v1",
            resource="userextras",
            subresource=req.extra_key,
            name=req.name,
        )
    return Attributes(
        requestor,
        "impersonate",
        True,
        api_group=AUTHENTICATION_GROUP,
        api_version="v1",
        resource="uids",
        name=req.name,
    )


def impersonate(
    requestor: UserInfo,
    headers: Sequence[tuple[str, str]],
    authorize: Callable[[Attributes], tuple[Decision, str]],
) -> UserInfo | None:
    """The impersonated identity, None when no ``Impersonate-*`` header was sent; raises 403/400."""
    reqs = requests_from_headers(headers)
    if not reqs:
        return None
    groups_specified = any(r.kind == "Group" for r in reqs)
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for req in reqs:
        attrs = _attributes(requestor, req)
        decision, reason = authorize(attrs)
        if decision is not Decision.ALLOW:
            raise forbidden(attrs, reason)
        if req.kind == "ServiceAccount":
            username = rbac.service_account_username(req.namespace, req.name)
            if not groups_specified:
                groups = list(rbac.service_account_groups(req.namespace))
        elif req.kind == "User":
            username = req.name
        elif req.kind == "Group":
            groups.append(req.name)
        elif req.kind == "UserExtra":
            extra.setdefault(req.extra_key, []).append(req.name)
        else:
            uid = req.name
    if username != ANONYMOUS:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return UserInfo(username, tuple(groups), uid, extra)
