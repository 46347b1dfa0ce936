"""Why a pod did not fit: per-node statuses and the exact FitError text kube prints.

The message is what users read in ``kubectl describe pod`` (the ``PodScheduled`` condition and the
``FailedScheduling`` event), so it follows ``FitError.Error()`` byte for byte:

    0/<N> nodes are available: <count> <reason>, <count> <reason>.[ <PostFilter message>]

Reasons are counted once per node that reported them; nodes without an explicit status take the
"absent nodes" status (e.g. the PreFilter rejection or ``node(s) didn't satisfy plugin(s) [...]``).
The ``"<count> <reason>"`` strings are sorted as plain strings (Go's ``sort.Strings``), so
``"28 node(s)..."`` sorts before ``"4 Insufficient..."``. A PreFilter rejection replaces the
histogram with its own message; a PostFilter (preemption) message is appended after a space.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from scheduler.status import Code, Status

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
#: The PostFilter message DefaultPreemption uses when removing pods would not help anywhere.
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"


class NodeToStatus:
    """Statuses of the nodes where the pod failed; nodes not listed take ``absent_status``.

    kube's ``NodeToStatus``: when PreFilter rejects the pod (or narrows the node set) the
    framework does not write a status per node but sets the absent-nodes status instead.
    """

    __slots__ = ("_statuses", "absent_status")

    def __init__(
        self, statuses: dict[str, Status] | None = None, absent_status: Status | None = None
    ) -> None:
        self._statuses: dict[str, Status] = dict(statuses or {})
        self.absent_status: Status = absent_status or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get(self, node_name: str) -> Status:
        return self._statuses.get(node_name, self.absent_status)

    def set(self, node_name: str, status: Status) -> None:
        self._statuses[node_name] = status

    def __len__(self) -> int:
        return len(self._statuses)

    def __contains__(self, node_name: object) -> bool:
        return node_name in self._statuses

    def items(self) -> Iterator[tuple[str, Status]]:
        return iter(self._statuses.items())

    def nodes_for_code(self, all_node_names: Iterable[str], code: Code) -> list[str]:
        """Names of nodes whose (explicit or absent) status has ``code``, in ``all_node_names`` order."""
        if self.absent_status.code == code:
            return [n for n in all_node_names if self.get(n).code == code]
        wanted = {n for n, s in self._statuses.items() if s.code == code}
        return [n for n in all_node_names if n in wanted]


@dataclass
class Diagnosis:
    """What a failed cycle learned: per-node statuses, rejecting plugins, PreFilter/PostFilter messages."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    #: Plugins that returned Unschedulable(AndUnresolvable); the queue requeues on their events only.
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: Plugins that returned Pending; their events requeue without backoff.
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``FitError.Error()``."""
    msg = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        counts: dict[str, int] = {}
        for _, status in diagnosis.node_to_status.items():
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        explicit = len(diagnosis.node_to_status)
        if explicit < num_all_nodes:
            for reason in diagnosis.node_to_status.absent_status.reasons:
                counts[reason] = counts.get(reason, 0) + num_all_nodes - explicit
        histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
        if histogram:
            msg += f" {', '.join(histogram)}."
    if diagnosis.post_filter_msg:
        msg += f" {diagnosis.post_filter_msg}"
    return msg


class FitError(Exception):
    """The pod fits no node; ``str()`` is kube's message, recomputed so a PostFilter message can be added."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    @property
    def message(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)

    def __str__(self) -> str:
        return self.message


class NoNodesAvailableError(Exception):
    """kube's ``ErrNoNodesAvailable``: the snapshot holds no nodes at all."""

    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


def preemption_not_helpful(num_all_nodes: int, node_to_status: NodeToStatus | None = None) -> str:
    """The FitError text DefaultPreemption builds when no node has a preemption candidate.

    Nodes it examined keep their dry-run status; every other node counts as
    ``Preemption is not helpful for scheduling``.
    """
    nts = node_to_status or NodeToStatus()
    nts.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, PREEMPTION_NOT_HELPFUL)
    return fit_error_message(num_all_nodes, Diagnosis(node_to_status=nts))
