"""``ValidateStatefulSetSpec`` once per shape: the sets of one template validate alike.

:func:`~.apps.validate_statefulset_spec` is a pure function of ``spec`` (no gate, no lookup). The
sets a controller or a bench creates from one template differ only in per-set strings: the
selector's ``matchLabels`` values, the template's label values (``app: gang-N``) and the
``serviceName``. Those are checked by nothing but one rule each — a label value
(``IsValidLabelValue``, in ``ValidateLabels``, ``ValidateLabelSelector`` and the selector's
conversion) or a DNS-1123 label (the service) — and by the one relation between them: the
selector must match the template's labels, which for a ``matchLabels``-only selector is "each
selector value equals the template label of its key".

So a spec that validated without error is remembered by its exact JSON text with those strings
blanked, together with that relation (one flag per selector key: the template's label equals
it); a later spec with the same key passes when its own strings pass their rules. Only a selector
of ``matchLabels`` alone is blanked (a ``matchExpressions`` value may compare with a template
label); only string values are. Anything else is validated in full, which also gives every error
in kube's order (a spec with errors is never remembered). The text is ``orjson``'s under
``EXACT_JSON`` (type-exact; subclasses of builtins are refused); a text holding ``null`` is not
remembered, since orjson writes NaN and infinities as ``null`` too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.field import ErrorList
from apiserver.registry.strategies.validmemo import ValidKeys, exact_text
from apiserver.validation import names

Key = tuple[bytes, tuple[bool, ...]]


class StatefulSetSpecMemo:
    """The valid specs seen, keyed by (blanked text, selector-matches-template flags)."""

    __slots__ = ("_valid", "_validate")

    def __init__(self, validate: Callable[[Any], ErrorList]) -> None:
        self._valid: ValidKeys[Key] = ValidKeys()
        self._validate = validate

    def validate(self, spec: Any) -> ErrorList:
        """``validate_statefulset_spec(spec)``, from memory where the spec is known valid."""
        found = spec_key(spec)
        if found is not None:
            key, own = found
            if key in self._valid and own_strings_valid(spec, own):
                return []
        errs = self._validate(spec)
        if not errs and found is not None:
            self._valid.add(found[0])
        return errs

    def clear(self) -> None:
        self._valid.clear()


def _str_values(d: Any) -> bool:
    return type(d) is dict and all(type(v) is str for v in d.values())


def spec_key(spec: Any) -> tuple[Key, list[str]] | None:
    """The key and the label values it blanked, or None when the spec is not of the known form."""
    if type(spec) is not dict:
        return None
    sel = spec.get("selector")
    template = spec.get("template")
    if type(sel) is not dict or type(template) is not dict:
        return None
    match = sel.get("matchLabels")
    if len(sel) != 1 or not _str_values(match):
        return None
    meta = template.get("metadata")
    labels = meta.get("labels") if type(meta) is dict else None
    if not _str_values(labels):
        return None
    assert type(meta) is dict and type(labels) is dict and type(match) is dict
    flags = tuple(labels.get(k) == v for k, v in match.items())
    blanked = dict(spec)
    if type(spec.get("serviceName")) is str:
        blanked["serviceName"] = ""
    blanked["selector"] = {"matchLabels": dict.fromkeys(match, "")}
    blanked["template"] = {**template, "metadata": {**meta, "labels": dict.fromkeys(labels, "")}}
    text = exact_text(blanked)
    if text is None:
        return None
    return (text, flags), [*match.values(), *labels.values()]


def own_strings_valid(spec: dict[str, Any], values: list[str]) -> bool:
    """The per-set strings :func:`spec_key` blanked (``values``) and the service pass their rules."""
    service = spec.get("serviceName")
    if type(service) is str and service and names.is_dns1123_label(service):
        return False
    return not any(names.is_valid_label_value(v) for v in values)


__all__ = ["StatefulSetSpecMemo", "own_strings_valid", "spec_key"]
