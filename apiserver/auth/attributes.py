"""What a request asks for: kube's ``authorizer.Attributes`` and ``RequestInfoFactory``.

The authorizer sees a request only through these attributes, so the same decision code serves
HTTP requests, impersonation checks, the escalation check and SubjectAccessReviews.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from apiserver.api.users import UserInfo

#: path prefixes of resource requests (``/api`` has no group segment)
API_PREFIXES = ("api", "apis")
#: ``/apis/<g>/<v>/watch/...`` and ``.../proxy/...``: the verb is the path segment
SPECIAL_VERBS = ("proxy", "watch")
#: ``/api/v1/namespaces/<ns>/status`` is the Namespace's subresource, not a resource "status"
NAMESPACE_SUBRESOURCES = ("status", "finalize")

_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


@dataclass(frozen=True)
class Attributes:
    """``authorizer.AttributesRecord``: one (user, verb, target) to decide on."""

    user: UserInfo
    verb: str
    resource_request: bool
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    #: the URL path of a non-resource request (``/healthz``, ``/apis``)
    path: str = ""


def _parse_bool(value: str) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def _is_path_segment(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "%" not in name


def _exact_name(field_selector: str) -> str:
    """The ``metadata.name`` a field selector requires exactly (``RequiresExactMatch``), or ``""``."""
    for term in field_selector.split(","):
        term = term.strip()
        if "!=" in term:
            continue
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        if sep and key.strip() == "metadata.name":
            return value.strip()
    return ""


def request_attributes(
    user: UserInfo, method: str, path: str, query: Mapping[str, Sequence[str]]
) -> Attributes:
    """kube's ``RequestInfoFactory.NewRequestInfo`` turned into authorizer attributes.

    ``query`` maps each query parameter to its values (``urllib.parse.parse_qs``). A path that is
    not ``/api/<v>/...`` or ``/apis/<g>/<v>/...`` is a non-resource request whose verb is the
    lower-cased HTTP method.
    """
    parts = [p for p in path.strip("/").split("/") if p] if path.strip("/") else []
    non_resource = Attributes(user, method.lower(), False, path=path)
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return non_resource
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(parts) < 3:
            return non_resource
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]
    via_special_verb = False
    if parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            # kube answers such a path with an error; a request it cannot read is decided as-is
            return Attributes(user, parts[0], True, api_group=group, api_version=version)
        verb, parts = parts[0], parts[1:]
        via_special_verb = True
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    resource = parts[0]
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 and not via_special_verb else ""
    if not name and verb == "get":
        watch_values = list(query.get("watch") or [])
        watch = False
        if watch_values:
            parsed = _parse_bool(watch_values[0])
            watch = parsed if parsed is not None else watch_values[0].lower() not in ("false", "0")
        verb = "watch" if watch else "list"
        selected = _exact_name(next(iter(query.get("fieldSelector") or [""]), ""))
        if _is_path_segment(selected):
            name = selected
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user,
        verb,
        True,
        namespace=namespace,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=subresource,
        name=name,
        path=path,
    )
