"""Which HTTP methods kube routes on each resource path shape (its API installer's action table).

kube-apiserver installs, per resource, only the routes its storage implements, and on the
all-namespaces collection path of a namespaced resource (``/api/v1/pods``) only LIST and WATCH:
no create, no delete-collection. A method without a route is go-restful's 405, whatever the body
says. Checking the shape here, before any verb runs, keeps one mistaken ``DELETE /api/v1/pods``
from emptying every namespace, and keeps ``DELETE …/pods/x/status`` from deleting the pod.
"""

from __future__ import annotations

from apiserver import errors
from apiserver.rest.resources import ResourceDef
from apiserver.server.requestinfo import RequestInfo

#: the verb a method names on an object or one of its subresources
_ITEM_VERBS = {
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
    "POST": "create",
}


def routed_verbs(info: RequestInfo, rd: ResourceDef) -> frozenset[str]:
    """The verbs kube installs a route for on this path (by the request's method, not its query)."""
    verbs = set(rd.verbs)
    if info.subresource:
        sub = rd.subresource(info.subresource)
        return frozenset(sub.verbs) if sub is not None else frozenset()
    if info.name:
        return frozenset(verbs & {"get", "update", "patch", "delete"})
    if rd.namespaced and not info.namespace:
        return frozenset(verbs & {"list", "watch"})
    return frozenset(verbs & {"list", "watch", "create", "deletecollection"})


def check_routed(method: str, info: RequestInfo, rd: ResourceDef) -> None:
    """Raise kube's 405 when no route serves ``method`` on the path ``info`` describes."""
    verbs = routed_verbs(info, rd)
    if info.name or info.subresource:
        ok = _ITEM_VERBS.get(method) in verbs
    elif method in ("GET", "HEAD"):
        ok = bool(verbs & {"list", "watch"})
    elif method == "POST":
        ok = "create" in verbs
    elif method == "DELETE":
        ok = "deletecollection" in verbs
    else:  # PUT and PATCH have no collection route
        ok = False
    if not ok:
        raise errors.not_routed()
