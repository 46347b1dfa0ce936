"""``metav1.Status`` errors with the HTTP codes and reasons kube-apiserver uses.

Every component (HTTP handlers, the in-process client, controllers) raises and catches the same
:class:`StatusError`, so a controller sees exactly what a remote client would see.
"""

from __future__ import annotations

from typing import Any

from apiserver.field import ErrorList, aggregate_message


class StatusError(Exception):
    """An API error carrying a complete ``metav1.Status`` body."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        # kube's JSON serializer emits metav1.Status fields in struct order: details before code.
        if self.details is not None:  # an empty StatusDetails still prints (kube's non-resource 403)
            body["details"] = self.details
        body["code"] = self.code
        return body

    @classmethod
    def from_status(cls, body: dict[str, Any], code: int | None = None) -> StatusError:
        return cls(
            int(body.get("code") or code or 500),
            str(body.get("reason") or ""),
            str(body.get("message") or ""),
            body.get("details"),
        )

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


def qualified_resource(resource: str, group: str) -> str:
    """``schema.GroupResource.String()``: ``statefulsets.apps``, or bare ``pods`` for core."""
    return f"{resource}.{group}" if group else resource


def qualified_kind(kind: str, group: str) -> str:
    return f"{kind}.{group}" if group else kind


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = kind
    d.update(extra)
    return d


def not_found(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(
        404,
        "NotFound",
        f'{qualified_resource(resource, group)} "{name}" not found',
        _details(name, group, resource),
    )


def no_route() -> StatusError:
    """kube's answer to a path nothing serves (an unknown resource or subresource).

    ``NewGenericServerResponse`` with an empty group-resource: its ``details`` print as ``{}``,
    which kubectl relies on (``kubectl debug`` reads ``Details.Name`` to tell a missing
    subresource from a missing pod).
    """
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{qualified_resource(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


def conflict(resource: str, name: str, group: str, detail: str) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified_resource(resource, group)} "{name}": {detail}',
        _details(name, group, resource),
    )


STALE_RV = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(kind: str, name: str, group: str, errs: ErrorList) -> StatusError:
    """422 ``Invalid`` with one cause per field error (``errors.NewInvalid``)."""
    causes = [e.to_cause() for e in errs]
    msg = f'{qualified_kind(kind, group)} "{name}" is invalid: {aggregate_message(errs)}'
    return StatusError(422, "Invalid", msg, _details(name, group, kind, causes=causes))


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(resource: str, name: str, group: str, detail: str) -> StatusError:
    target = (
        f'{qualified_resource(resource, group)} "{name}"' if name else qualified_resource(resource, group)
    )
    return StatusError(403, "Forbidden", f"{target} is forbidden: {detail}", _details(name, group, resource))


def method_not_allowed(verb: str, resource: str, group: str = "") -> StatusError:
    return StatusError(
        405,
        "MethodNotAllowed",
        f"{verb} is not supported on resources of kind {qualified_resource(resource, group)!r}",
        _details("", group, resource),
    )


def not_routed() -> StatusError:
    """kube's answer to a method no route serves on a path that exists (go-restful's 405, rendered
    by the generic server's service error handler: a Status with empty details)."""
    return StatusError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
    )


def gone(message: str) -> StatusError:
    return StatusError(410, "Gone", message)


def expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def resource_expired(message: str = "too old resource version") -> StatusError:
    return StatusError(410, "Expired", message)


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {content_type}",
    )


def not_acceptable(message: str) -> StatusError:
    return StatusError(406, "NotAcceptable", message)


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def too_many_requests(
    message: str, retry_after: int | None = None, causes: list[dict[str, str]] | None = None
) -> StatusError:
    details: dict[str, Any] = {}
    if retry_after is not None:
        details["retryAfterSeconds"] = retry_after
    if causes:
        details["causes"] = causes
    return StatusError(429, "TooManyRequests", message, details or None)


def timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)


def internal_error(message: str) -> StatusError:
    return StatusError(
        500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )


def service_unavailable(message: str) -> StatusError:
    return StatusError(503, "ServiceUnavailable", message)


def is_not_found(e: BaseException) -> bool:
    return isinstance(e, StatusError) and e.code == 404


def is_already_exists(e: BaseException) -> bool:
    return isinstance(e, StatusError) and e.reason == "AlreadyExists"


def is_conflict(e: BaseException) -> bool:
    return isinstance(e, StatusError) and e.code == 409 and e.reason == "Conflict"


def is_invalid(e: BaseException) -> bool:
    return isinstance(e, StatusError) and e.code == 422


def is_gone(e: BaseException) -> bool:
    return isinstance(e, StatusError) and e.code == 410
