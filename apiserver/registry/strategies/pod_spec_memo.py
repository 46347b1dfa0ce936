"""``ValidatePodSpec`` once per distinct pod spec: the pods of one template validate alike.

:func:`~.pod_validation.validate_pod_spec` is a pure function of the spec and the options (no
feature gate, no lookup; the path only labels the errors it finds). A controller creates the
pods of a template by the thousand, and they differ, if at all, in ``hostname`` (a StatefulSet
pod's own name) or an already chosen ``nodeName``; both are checked by nothing but one name rule
each (``hostname`` a DNS-1123 label, ``nodeName`` a DNS subdomain). The pods of *different*
sets of one template differ besides in ``subdomain`` (the set's service; a DNS-1123 label, when
set) and in a gang's ``schedulingGroup.podGroupName`` (its set's PodGroup; required, a DNS
subdomain): in ``gangs-1000x3`` every set of 3 made a new text, so only 2 of 3 pods were answered.

So a spec that validated without error is remembered by its exact JSON text with those strings
blanked, and a later spec with the same text passes when its own strings pass their rules (an
empty ``podGroupName`` does not: it is required, so a blanked key never stands for it).
Anything else is validated in full, which also gives every error in kube's order (a spec with
errors is never remembered). The text is ``orjson``'s under ``EXACT_JSON`` (type-exact:
``true``, ``1`` and ``1.0`` differ; subclasses of builtins are refused); a spec whose text holds
``null`` is not remembered, since orjson writes NaN and infinities as ``null`` too.
"""

from __future__ import annotations

from typing import Any

from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.pod_validation import PodValidationOptions, validate_pod_spec
from apiserver.registry.strategies.validmemo import ValidKeys, exact_text
from apiserver.validation import names

#: The spec strings validated on their own, by these rules only (see ``validate_pod_spec``),
#: each with the strings its rule accepted already (``nodeName``'s ``NameIsDNSSubdomain`` of a
#: full name is ``IsDNS1123Subdomain`` itself)
_OWN_RULES = (
    ("hostname", names.is_dns1123_label, names.remembered(names.is_dns1123_label)),
    ("nodeName", names.is_dns1123_subdomain, names.remembered(names.is_dns1123_subdomain)),
    ("subdomain", names.is_dns1123_label, names.remembered(names.is_dns1123_label)),
)
_KNOWN_SUBDOMAINS = names.remembered(names.is_dns1123_subdomain)
#: ``spec.schedulingGroup``'s own string (``validate_scheduling_group``: required, a DNS subdomain)
_GROUP, _GROUP_NAME = "schedulingGroup", "podGroupName"


class PodSpecMemo:
    """The valid specs seen, keyed by (text with the own strings blanked, options)."""

    __slots__ = ("_valid",)

    def __init__(self) -> None:
        self._valid: ValidKeys[tuple[bytes, PodValidationOptions]] = ValidKeys()

    def validate(self, spec: Any, path: Path, opts: PodValidationOptions) -> ErrorList:
        """``validate_pod_spec(spec, path, opts)``, from memory where the spec is known valid."""
        key = _key(spec, opts)
        if key is not None and key in self._valid and _own_strings_valid(spec):
            return []
        errs = validate_pod_spec(spec, path, opts)
        if not errs and key is not None:
            self._valid.add(key)
        return errs

    def clear(self) -> None:
        self._valid.clear()


def _key(spec: Any, opts: PodValidationOptions) -> tuple[bytes, PodValidationOptions] | None:
    if type(spec) is not dict:
        return None
    blanked = spec
    for name, _, _ in _OWN_RULES:
        if type(spec.get(name)) is str:
            if blanked is spec:
                blanked = dict(spec)
            blanked[name] = ""
    group = spec.get(_GROUP)
    if type(group) is dict and type(group.get(_GROUP_NAME)) is str:
        if blanked is spec:
            blanked = dict(spec)
        blanked[_GROUP] = {**group, _GROUP_NAME: ""}
    text = exact_text(blanked)
    return None if text is None else (text, opts)


def _own_strings_valid(spec: dict[str, Any]) -> bool:
    for name, rule, known in _OWN_RULES:
        value = spec.get(name)
        if type(value) is str and value and value not in known and rule(value):
            return False
    group = spec.get(_GROUP)
    if type(group) is dict:
        value = group.get(_GROUP_NAME)
        if type(value) is str and (
            not value or (value not in _KNOWN_SUBDOMAINS and names.is_dns1123_subdomain(value))
        ):
            return False
    return True


#: The memo the Pod strategy validates with.
POD_SPECS = PodSpecMemo()

__all__ = ["POD_SPECS", "PodSpecMemo"]
