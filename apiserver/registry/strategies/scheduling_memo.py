"""A Workload's and a PodGroup's create validation once per shape: a controller's sets validate alike.

The StatefulSet controller creates one Workload and one PodGroup per gang set, and the specs of
different sets differ only in names: a PodGroup's ``workloadRef`` (``workloadName``, a DNS
subdomain; ``templateName``, a DNS label; both required), a Workload's ``controllerRef.name``
(required, a path segment name) and the name of its one pod-group template (required, a DNS
label). Nothing else in :func:`~.scheduling.validate_pod_group_spec` or
:func:`~.scheduling.validate_workload_spec` reads those names, except the template names'
uniqueness (per list and across the tree), which a lone template in a spec without
``compositePodGroupTemplates`` cannot break. The validation reads the context only for three
feature gates. So in ``gangs-1000x3`` every set made a spec never seen before, and each was
validated in full.

A create's spec that validated without error is remembered by its exact JSON text with those
names blanked and the three gates' values; a later spec with the same key passes when its own
names are non-empty strings passing their rules. Anything else (an update, a name of another
type or empty, two templates, any error) is validated in full, which also words every error in
kube's order; a spec with errors is never remembered. The text is ``orjson``'s under
``EXACT_JSON`` as in :mod:`.pod_spec_memo` (type-exact, subclasses refused, ``null`` refused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.field import ErrorList
from apiserver.registry.strategies.validmemo import ValidKeys, exact_text
from apiserver.rest.strategy import StrategyContext
from apiserver.workloadbuilder import _names as names
from featuregates import (
    COMPOSITE_POD_GROUP,
    POD_GROUP_PREEMPTION_POLICY,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
)

#: the gates the two validations read (their only use of the context)
_GATES = (COMPOSITE_POD_GROUP, POD_GROUP_PREEMPTION_POLICY, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)

Rule = Callable[[str], list[str]]
Key = tuple[bytes, tuple[bool, ...]]


def _name_ok(value: Any, rule: Rule) -> bool:
    return type(value) is str and bool(value) and not rule(value)


def _pod_group_names(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The spec with its ``workloadRef`` names blanked, or None when they are not both plain
    valid names (or absent: then there is nothing per set to blank, the text is the key)."""
    ref = spec.get("workloadRef")
    if ref is None:
        return spec
    if type(ref) is not dict:
        return None
    if not _name_ok(ref.get("workloadName"), names.is_dns1123_subdomain) or not _name_ok(
        ref.get("templateName"), names.is_dns1123_label
    ):
        return None
    return {**spec, "workloadRef": {**ref, "workloadName": "", "templateName": ""}}


def _workload_names(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The spec with ``controllerRef.name`` and its lone template's name blanked, or None."""
    if "compositePodGroupTemplates" in spec:  # a tree (the union rule allows no list beside it)
        return None
    ref, templates = spec.get("controllerRef"), spec.get("podGroupTemplates")
    if type(ref) is not dict or type(templates) is not list or len(templates) != 1:
        return None
    tmpl = templates[0]
    if type(tmpl) is not dict:
        return None
    if not _name_ok(ref.get("name"), names.is_path_segment_name) or not _name_ok(
        tmpl.get("name"), names.is_dns1123_label
    ):
        return None
    return {**spec, "controllerRef": {**ref, "name": ""}, "podGroupTemplates": [{**tmpl, "name": ""}]}


class SpecMemo:
    """The valid create specs of one kind seen, keyed by (text with the names blanked, gates)."""

    __slots__ = ("_blank", "_valid")

    def __init__(self, blank: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self._blank = blank
        self._valid: ValidKeys[Key] = ValidKeys()

    def validate(
        self,
        ctx: StrategyContext,
        spec: Any,
        full: Callable[[StrategyContext, Any, Any, bool], ErrorList],
    ) -> ErrorList:
        """``full(ctx, spec, None, False)`` (a create's validation), from memory where known valid."""
        key = self._key(ctx, spec)
        if key is not None and key in self._valid:
            return []
        errs = full(ctx, spec, None, False)
        if not errs and key is not None:
            self._valid.add(key)
        return errs

    def _key(self, ctx: StrategyContext, spec: Any) -> Key | None:
        if type(spec) is not dict:
            return None
        blanked = self._blank(spec)
        if blanked is None:
            return None
        text = exact_text(blanked)
        if text is None:
            return None
        return (text, tuple(map(ctx.gates.enabled, _GATES)))

    def clear(self) -> None:
        self._valid.clear()


#: The memos the PodGroup and Workload strategies validate their creates with.
POD_GROUP_SPECS = SpecMemo(_pod_group_names)
WORKLOAD_SPECS = SpecMemo(_workload_names)

__all__ = ["POD_GROUP_SPECS", "WORKLOAD_SPECS", "SpecMemo"]
