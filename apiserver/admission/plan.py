"""Which admission plugins act on a resource's writes: worked out once per (resource, operation).

The registry runs the whole chain on every write: ten plugins, each asked ``admit`` and then
``validate``, most of which return at once for most resources (DefaultTolerationSeconds on an
Event, the Service IP allocator on a Pod, the no-op ``validate`` of a mutating-only plugin).
kube's chain asks each plugin ``Handles(operation)`` first; the plan asks the same of the
plugins' :meth:`~apiserver.admission.Plugin.handles` (by operation and resource) once, when a
(resource, operation) is first written, and keeps the two ordered lists of the hooks that can
act: the chain's order and outcome are unchanged, the calls that could only return are not made.

A hook is left out when the plugin does not handle the pair, or when it is the base class's
no-op (:class:`~apiserver.admission.Plugin`'s ``admit``/``validate``). The plan is rebuilt when
the registry's plugin list changes (it is a public list; tests and embedders may edit it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from apiserver.admission import Attributes, Lookup, Plugin

Hook = Callable[[Attributes, Lookup], None]
#: a plugin's ``admits_nothing(operation, rd, api)``
Quiet = Callable[[str, Any, Any], bool]

#: the base class's no-op hooks (a plugin inheriting one never acts in that phase)
_NOOP_ADMIT = Plugin.admit
_NOOP_VALIDATE = Plugin.validate
#: bound of the (resource, operation) table
_ENTRIES = 4096


class Steps:
    """The hooks one (resource, operation) runs, in chain order."""

    __slots__ = ("admit", "operation", "quiet", "rd", "reinvoke", "validate")

    def __init__(
        self,
        rd: Any,
        admit: list[Hook],
        reinvoke: list[Hook],
        validate: list[Hook],
        operation: str = "",
        quiet: list[Quiet] | None = None,
    ) -> None:
        self.rd = rd  # held, so the id keying it cannot be reused while the entry lives
        self.admit = admit
        self.reinvoke = reinvoke
        self.validate = validate
        self.operation = operation
        #: the ``admits_nothing`` of the plugins of ``admit``, in the same order
        self.quiet = quiet if quiet is not None else [_never_quiet] * len(admit)

    def admits_nothing(self, api: Any) -> bool:
        """Whether no mutating hook can change a write of this (resource, operation) now: every
        plugin of ``admit`` says so by the stored configuration (``Plugin.admits_nothing``).
        Reinvocation needs a hook that acted first, so it cannot act either."""
        operation, rd = self.operation, self.rd
        return all(quiet(operation, rd, api) for quiet in self.quiet)


def _never_quiet(operation: str, rd: Any, api: Any) -> bool:
    """A plugin that cannot say (no ``admits_nothing``): it may act."""
    return False


def _acts(plugin: Any, operation: str, rd: Any) -> bool:
    handles = getattr(plugin, "handles", None)
    return handles is None or bool(handles(operation, rd))


def build_steps(plugins: Sequence[Any], operation: str, rd: Any) -> Steps:
    """The hooks of ``plugins`` that can act on ``operation`` of ``rd`` (see the module docs)."""
    admit: list[Hook] = []
    quiet: list[Quiet] = []
    reinvoke: list[Hook] = []
    validate: list[Hook] = []
    for p in plugins:
        if not _acts(p, operation, rd):
            continue
        cls = type(p)
        if getattr(cls, "admit", None) is not _NOOP_ADMIT:
            admit.append(p.admit)
            quiet.append(getattr(p, "admits_nothing", _never_quiet))
        again = getattr(p, "reinvoke", None)
        if again is not None:
            reinvoke.append(again)
        if getattr(cls, "validate", None) is not _NOOP_VALIDATE:
            validate.append(p.validate)
    return Steps(rd, admit, reinvoke, validate, operation, quiet)


class AdmissionPlan:
    """``(resource, operation) -> Steps`` over the registry's plugin list, rebuilt when that list
    (the object or its content) changes."""

    __slots__ = ("_plugins", "_source", "_steps")

    def __init__(self) -> None:
        self._plugins: list[Any] | None = None
        #: a copy of the list's content when the plan was built
        self._source: list[Any] = []
        self._steps: dict[tuple[int, str], Steps] = {}

    def steps(self, plugins: list[Any], operation: str, rd: Any) -> Steps:
        """The hooks of ``plugins`` that can act on ``operation`` of ``rd``.

        Asked twice per write (mutating, then validating admission): the list is compared with
        the copy of its content (a list comparison, element by element, identity first), not
        copied again into a tuple each time."""
        if plugins is not self._plugins or plugins != self._source:
            self._plugins = plugins
            self._source = list(plugins)
            self._steps.clear()
        key = (id(rd), operation)
        got = self._steps.get(key)
        if got is None or got.rd is not rd:
            if len(self._steps) >= _ENTRIES:
                self._steps.clear()  # custom resources' definitions are replaced as CRDs change
            got = self._steps[key] = build_steps(plugins, operation, rd)
        return got


__all__ = ["AdmissionPlan", "Steps", "build_steps"]
