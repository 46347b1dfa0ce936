"""Plugin result codes and :class:`Status` (re-exported by :mod:`scheduler.framework`).

"Unschedulable" is a *result* a plugin returns, not an exception: every extension point answers
with a :class:`Status` whose :class:`Code` comes from kube's closed set, plus human-readable
reasons that end up, counted per node, in the FitError message. ``None`` means Success, as a
nil ``*Status`` does in kube.
"""

from __future__ import annotations

import enum


class Code(enum.IntEnum):
    """kube's ``framework.Code`` values, in kube's order."""

    SUCCESS = 0
    #: An internal error: the cycle is aborted and the pod retried with backoff.
    ERROR = 1
    #: The pod does not fit now but preemption or a cluster change may help.
    UNSCHEDULABLE = 2
    #: The pod cannot fit this node and preemption on it would not help.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    #: Permit only: hold the pod until allowed or rejected.
    WAIT = 4
    #: PreFilter/PreScore/Bind: the plugin has nothing to do for this pod.
    SKIP = 5
    #: Like Unschedulable, but the pod waits on something outside the scheduler; requeued without backoff.
    PENDING = 6


_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """A plugin's answer: a code, reasons (joined with ``", "`` as the message) and the plugin that said it."""

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(
        self, code: Code = Code.SUCCESS, *reasons: str, plugin: str = "", error: BaseException | None = None
    ) -> None:
        self.code = code
        # (most statuses carry one non-empty reason: copied whole, without a comprehension's frame)
        self.reasons = list(reasons) if all(reasons) else [r for r in reasons if r]
        self.plugin = plugin
        self.error = error

    @classmethod
    def as_status(cls, err: BaseException, plugin: str = "") -> Status:
        """kube's ``AsStatus``: an Error status carrying the exception text."""
        return cls(Code.ERROR, str(err) or type(err).__name__, plugin=plugin, error=err)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def code_name(self) -> str:
        return _NAMES[self.code]

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod is rejected, not failed."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def as_error(self) -> BaseException:
        if self.error is not None:
            return self.error
        return RuntimeError(self.message() or self.code_name())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return (self.code, self.reasons, self.plugin) == (other.code, other.reasons, other.plugin)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        extra = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code_name()}, {self.reasons!r}{extra})"


def is_success(s: Status | None) -> bool:
    """A ``None`` status is Success, as a nil ``*Status`` is in kube."""
    return s is None or s.code == Code.SUCCESS


def code_of(s: Status | None) -> Code:
    return Code.SUCCESS if s is None else s.code
