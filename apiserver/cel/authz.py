"""Kubernetes' CEL authorizer library (``k8s.io/apiserver/pkg/cel/library/authz.go``) for admission
policies and webhook match conditions.

``authorizer.group("apps").resource("deployments").namespace("ns").name("web").check("update").allowed()``,
``authorizer.path("/healthz").check("get")``, ``authorizer.serviceAccount("ns", "sa")`` (checks as that
service account), ``authorizer.requestResource.check("delete")`` (the request's own resource), and
on a decision ``allowed()``, ``reason()``, ``errored()``, ``error()``.

The runtime has no custom types: the checks travel as maps and every function is a plain callable.
``check`` asks the request's authorizer, which the admission plugin that evaluates the expression
provides for the duration of the evaluation (:data:`CURRENT_CHECKER`, a context variable, like the
request's identity it carries).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

#: (target, verb) -> (allowed, reason, error): the request's authorizer while admission evaluates
Checker = Callable[[dict[str, Any], str], tuple[bool, str, str]]
CURRENT_CHECKER: contextvars.ContextVar[Checker | None] = contextvars.ContextVar(
    "cel_authorizer", default=None
)

_KIND = "__authz"


def authorizer_value(request_resource: dict[str, str]) -> dict[str, Any]:
    """The ``authorizer`` variable: its ``requestResource`` is the request's own resource check."""
    return {_KIND: "authorizer", "requestResource": {_KIND: "resource", **request_resource}}


def _with(receiver: Any, **fields: Any) -> dict[str, Any]:
    base = dict(receiver) if isinstance(receiver, dict) else {}
    base.update(fields)
    return base


def _group(receiver: Any, group: str) -> dict[str, Any]:
    return _with(receiver, **{_KIND: "group", "group": group})


def _resource(receiver: Any, resource: str) -> dict[str, Any]:
    return _with(receiver, **{_KIND: "resource", "resource": resource})


def _subresource(receiver: Any, subresource: str) -> dict[str, Any]:
    return _with(receiver, subresource=subresource)


def _namespace(receiver: Any, namespace: str) -> dict[str, Any]:
    return _with(receiver, namespace=namespace)


def _name(receiver: Any, name: str) -> dict[str, Any]:
    return _with(receiver, name=name)


def _path(receiver: Any, path: str) -> dict[str, Any]:
    return _with(receiver, **{_KIND: "path", "path": path})


def _service_account(receiver: Any, namespace: str, name: str) -> dict[str, Any]:
    return {_KIND: "authorizer", "serviceAccount": [namespace, name]}


def _check(receiver: Any, verb: str) -> dict[str, Any]:
    checker = CURRENT_CHECKER.get()
    target = receiver if isinstance(receiver, dict) else {}
    if checker is None:
        return {_KIND: "decision", "allowed": False, "reason": "", "error": "no authorizer available"}
    allowed, reason, error = checker(target, verb)
    return {_KIND: "decision", "allowed": allowed, "reason": reason, "error": error}


def _field(name: str, default: Any) -> Callable[[Any], Any]:
    def get(decision: Any) -> Any:
        return decision.get(name, default) if isinstance(decision, dict) else default

    get.__name__ = name
    return get


AUTHZ_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "group": _group,
    "resource": _resource,
    "subresource": _subresource,
    "namespace": _namespace,
    "name": _name,
    "path": _path,
    "serviceAccount": _service_account,
    "check": _check,
    "allowed": _field("allowed", False),
    "reason": _field("reason", ""),
    "error": _field("error", ""),
    "errored": lambda d: bool(d.get("error")) if isinstance(d, dict) else False,
}
