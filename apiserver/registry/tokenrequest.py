"""``serviceaccounts/token`` (TokenRequest, authentication.k8s.io/v1): a signed, bound JWT.

Shaped like kube's ``pkg/registry/core/serviceaccount/storage/token.go`` and
``pkg/serviceaccount/claims.go``: the ServiceAccount must exist; ``spec.expirationSeconds``
defaults to 3600 and must be at least 600; ``spec.audiences`` defaults to the API server's
audience (its issuer); an optional ``spec.boundObjectRef`` (Pod, Secret or Node) must name a live
object with a matching UID (a Pod must run as this ServiceAccount). The token is an RS256 JWT (PyJWT) with kube's registered claims
(``iss``, ``sub: system:serviceaccount:<ns>:<name>``, ``aud``, ``iat``, ``nbf``, ``exp``, ``jti``)
and the private ``kubernetes.io`` claim, signed and later authenticated by
:mod:`apiserver.auth.serviceaccount` (the token authenticates as its ServiceAccount while it and
its bound object exist).
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver import errors
from apiserver import field as fielderr
from apiserver.api.types import Obj
from apiserver.auth.serviceaccount import ISSUER
from apiserver.field import Path
from apiserver.meta import new_uid, rfc3339

DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
_BOUND_KINDS = {"Pod": ("", "pods", True), "Secret": ("", "secrets", True), "Node": ("", "nodes", False)}


def validate_token_request(spec: Obj) -> fielderr.ErrorList:
    """``ValidateTokenRequest``."""
    errs: fielderr.ErrorList = []
    sp = Path("spec")
    exp = spec.get("expirationSeconds")
    if isinstance(exp, bool) or not isinstance(exp, int):
        errs.append(fielderr.invalid(sp.child("expirationSeconds"), exp, "must be an integer"))
    elif exp < MIN_EXPIRATION:
        errs.append(
            fielderr.invalid(
                sp.child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"
            )
        )
    elif exp > MAX_EXPIRATION:
        errs.append(
            fielderr.invalid(
                sp.child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"
            )
        )
    auds = spec.get("audiences")
    if not isinstance(auds, list) or not all(isinstance(a, str) for a in auds):
        errs.append(fielderr.invalid(sp.child("audiences"), auds, "must be a list of strings"))
    ref = spec.get("boundObjectRef")
    if ref is not None and not isinstance(ref, dict):
        errs.append(fielderr.invalid(sp.child("boundObjectRef"), ref, "must be an object"))
    return errs


def create_token(api: Any, namespace: str, name: str, body: Any) -> Obj:
    """Answer ``POST .../serviceaccounts/<name>/token`` with the TokenRequest, status filled in."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object of kind TokenRequest")
    kind = body.get("kind") or "TokenRequest"
    if kind != "TokenRequest":
        raise errors.bad_request(
            f"the kind in the data ({kind}) does not match the expected kind (TokenRequest)"
        )
    sa = api.lookup("", "serviceaccounts", namespace, name)
    if sa is None:
        raise errors.not_found("serviceaccounts", name, "")
    req = copy.deepcopy(body)
    spec = req.get("spec")
    if spec is None:
        spec = req["spec"] = {}
    if not isinstance(spec, dict):
        raise errors.bad_request("spec must be an object")
    if spec.get("expirationSeconds") is None:
        spec["expirationSeconds"] = DEFAULT_EXPIRATION
    if not spec.get("audiences"):
        spec["audiences"] = [ISSUER]
    errs = validate_token_request(spec)
    if errs:
        raise errors.invalid("TokenRequest", name, "authentication.k8s.io", errs)
    now = int(api.clock.now())
    private: Obj = {"namespace": namespace, "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]}}
    ref = spec.get("boundObjectRef")
    if ref is not None:
        api_version = str(ref.get("apiVersion") or "")
        ref_group, _, ref_version = api_version.rpartition("/")
        kind = str(ref.get("kind") or "")
        if ref_group or kind not in _BOUND_KINDS:
            raise errors.bad_request(
                f"cannot bind token to object of type {ref_group}/{ref_version}, Kind={kind}"
            )
        group, plural, namespaced = _BOUND_KINDS[kind]
        target = api.lookup(group, plural, namespace if namespaced else "", ref.get("name") or "")
        if target is None:
            raise errors.not_found(plural, ref.get("name") or "", group)
        if kind == "Pod" and (target.get("spec") or {}).get("serviceAccountName") != name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{name}" to pod running with different serviceaccount name.'
            )
        if ref.get("uid") and ref["uid"] != target["metadata"]["uid"]:
            # kube names the kind, not the resource, in this conflict
            raise errors.conflict(
                kind,
                ref.get("name") or "",
                group,
                f"the UID in the bound object reference ({ref['uid']}) does not match the UID in record. "
                "The object might have been deleted and then recreated",
            )
        private[ref["kind"].lower()] = {"name": target["metadata"]["name"], "uid": target["metadata"]["uid"]}
        if ref["kind"] == "Pod" and (target.get("spec") or {}).get("nodeName"):
            node = api.lookup("", "nodes", "", target["spec"]["nodeName"])
            if node is not None:
                private["node"] = {"name": node["metadata"]["name"], "uid": node["metadata"]["uid"]}
    expiry = now + int(spec["expirationSeconds"])
    claims = {
        "aud": list(spec["audiences"]),
        "exp": expiry,
        "iat": now,
        "iss": ISSUER,
        "jti": new_uid(),
        "kubernetes.io": private,
        "nbf": now,
        "sub": f"system:serviceaccount:{namespace}:{name}",
    }
    token = api.service_account_tokens.sign(claims)
    md = req.get("metadata") if isinstance(req.get("metadata"), dict) else {}
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {**md, "name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": rfc3339(expiry)},
    }
