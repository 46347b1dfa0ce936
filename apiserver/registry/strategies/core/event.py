"""core/v1 Events (``pkg/registry/core/event``): the legacy validation events.k8s.io shares."""

from __future__ import annotations

import functools

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import (
    ACTION_LIMIT,
    NOTE_LIMIT,
    REASON_LIMIT,
    REPORTING_INSTANCE_LIMIT,
    UntrackedGenerationStrategy,
    _str,
)
from apiserver.registry.strategies.podspec import (
    as_dict,
    fmt_errors,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names

EVENT_TYPES = ("Normal", "Warning")


#: The paths of the rules every Event meets, rendered once (a recorder writes thousands of Events).
_INVOLVED_NS = "involvedObject.namespace"
_NAMESPACE = "namespace"


@functools.lru_cache(maxsize=256)
def _namespace_messages(ns: str) -> tuple[str, ...]:
    """``IsDNS1123Subdomain(namespace)``'s messages, remembered: a cluster has few namespaces, and
    every Event in one of them asks the same question (a pure function of the string)."""
    return tuple(names.is_dns1123_subdomain(ns))


def legacy_validate_event(
    event: Obj, namespace: str, reporting_field: str = "reportingComponent"
) -> ErrorList:
    """``legacyValidateEvent``: lenient rules every Event must pass, whatever its API group.

    The Event every recorder writes (``tools/record``: no ``eventTime``, its involved object in
    the request's namespace, a namespace already checked valid) passes them all: answered here
    from those facts alone, in a few lookups; any other Event goes through
    :func:`_legacy_rules`, the rules step by step (which would answer no error for it either)."""
    involved = event.get("involvedObject")
    if (
        namespace
        and type(involved) is dict
        and involved.get("namespace") == namespace
        and type(namespace) is str
        and not event.get("eventTime")
        and len(namespace) <= names.DNS1123_SUBDOMAIN_MAX_LENGTH
        and not _namespace_messages(namespace)
    ):
        return []
    return _legacy_rules(event, namespace, reporting_field)


def _legacy_rules(event: Obj, namespace: str, reporting_field: str) -> ErrorList:
    """``legacyValidateEvent`` step by step (see :func:`legacy_validate_event`)."""
    errs: ErrorList = []
    involved_ns = _str(as_dict(event.get("involvedObject")).get("namespace"))
    ns = namespace or _str(as_dict(event.get("metadata")).get("namespace"))
    if not event.get("eventTime"):
        if not involved_ns:
            if ns not in ("", "default"):
                errs.append(field.invalid(_INVOLVED_NS, involved_ns, "does not match event.namespace"))
        elif ns != involved_ns:
            errs.append(field.invalid(_INVOLVED_NS, involved_ns, "does not match event.namespace"))
    else:
        if not involved_ns and ns not in ("default", "kube-system"):
            errs.append(field.invalid(_INVOLVED_NS, involved_ns, "does not match event.namespace"))
        rc = _str(event.get("reportingComponent"))
        if not rc:
            errs.append(field.required(reporting_field))
        errs.extend(fmt_errors(rc, Path(reporting_field), names.is_qualified_name))
        for key, limit in (
            ("reportingInstance", REPORTING_INSTANCE_LIMIT),
            ("action", ACTION_LIMIT),
            ("reason", REASON_LIMIT),
        ):
            value = _str(event.get(key))
            if not value:
                errs.append(field.required(key))
            if len(value) > limit:
                errs.append(field.invalid(key, "", f"can have at most {limit} characters"))
        if len(_str(event.get("message"))) > NOTE_LIMIT:
            errs.append(field.invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    # only names that can be valid are remembered: an over-long one is checked afresh
    ns_messages = _namespace_messages(ns) if len(ns) <= names.DNS1123_SUBDOMAIN_MAX_LENGTH else None
    for msg in ns_messages if ns_messages is not None else names.is_dns1123_subdomain(ns):
        errs.append(field.invalid(_NAMESPACE, ns, msg))
    return errs


class EventStrategy(UntrackedGenerationStrategy):
    """core/v1 Events: only the legacy rules apply (old clients must keep working)."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return legacy_validate_event(obj, ctx.namespace)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return legacy_validate_event(new, ctx.namespace)
