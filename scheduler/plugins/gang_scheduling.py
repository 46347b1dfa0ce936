"""GangScheduling: a gang (``schedulingPolicy.gang``) enters the queue, fits and binds as a whole.

* **PreEnqueue** holds a member until its PodGroup exists and ``minCount`` members are known to
  the scheduler (pending, assumed or bound, so pods added to a placed gang - scale 3→5, a
  rolling-update replacement - are let in at once). The queue re-checks the group's held pods
  when a member arrives, a member is bound (``AssignedPod/Add``, registered here with a hint
  that skips other groups' pods: a member the scheduler learns of as bound only after the
  held pod, as on a restart's first list, must release it), the PodGroup appears or changes,
  and once after the caches sync. A held pod reports why it waits with kube's
  ``NotReadyForScheduling`` condition and Event (``SchedulerPreEnqueuePodStatus``).
* **PlacementFeasible** (after each pod the PodGroup cycle tried in a placement): the gang can
  no longer reach ``minCount`` → Unschedulable; not yet → Wait; reached → Success. Members
  already bound count as scheduled. Upstream's messages, word for word.
* **Permit** is the gang barrier on the way to binding: a member waits until ``minCount``
  members are assumed or bound, then all waiting members are allowed together. The PodGroup
  cycle places the whole gang in one cycle, so the barrier opens within that cycle; a cycle
  that could not assume every pod rejects the waiting ones instead.

**Replacement policy** (kubernetes#136334, gangplane's ``PodGroupReplacementsScheduleFreely``,
off by default): off, a replacement member of a placed gang is held and placed like any member,
so together with the members still bound it must reach ``minCount`` again (1.37's behaviour);
on, once the group's ``PodGroupInitiallyScheduled`` is True its new members skip the three gang
checks above and are placed one by one, as the members of a basic group are.

Without ``GenericWorkload`` the plugin does nothing: PodGroups are ignored and pods are
scheduled one by one (the KEP's degraded-but-safe skew case).
"""

from __future__ import annotations

from typing import Any

from featuregates import GENERIC_WORKLOAD, POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY
from scheduler.events import ASSIGNED_POD_ADD, ClusterEventWithHint, QueueingHint
from scheduler.interfaces import CycleState, Handle, PodGroupInfo
from scheduler.nodeinfo import PodInfo
from scheduler.podgroup_status import replacements_schedule_freely
from scheduler.podgroups import gang_min_count, is_gang, min_count, pod_group_key, pod_group_name
from scheduler.status import Code, Status

NAME = "GangScheduling"
#: Permit waits without a timeout: 1.37 has none (a failed gang backs off and retries instead).
NO_TIMEOUT = 0.0


def waiting_for_pod_group(name: str) -> str:
    return f'waiting for pod\'s pod group "{name}" to appear in scheduling queue'


WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"


def cannot_be_satisfied(min_count: int, scheduled: int, remaining: int) -> str:
    return f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def not_yet_satisfied(min_count: int, scheduled: int, remaining: int) -> str:
    return f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"


class GangScheduling:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle or Handle()
        self._flags_of: Any = None
        self._flags: tuple[bool, bool] | None = None
        #: the answer to every member waiting for its gang's minCount, one object for all: the
        #: queue keeps a held pod's status (its message is read for the pod's report), and a
        #: big gang's members wait by thousands while it is created (a Status and its reasons
        #: list each). Never changed but by the framework's ``with_plugin`` (this plugin's name).
        self._waiting_for_min_count = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_MIN_COUNT)

    def _enabled(self) -> bool:
        gates = self.handle.gates
        return gates is None or gates.enabled(GENERIC_WORKLOAD)

    def _schedules_freely(self, pod_group: dict[str, Any] | None) -> bool:
        """The gang was placed once and replacements may schedule freely (module docstring)."""
        return replacements_schedule_freely(self.handle.gates, pod_group)

    def _group(self, pod: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        name = pod_group_name(pod)
        getter = self.handle.get_pod_group
        ns = (pod.get("metadata") or {}).get("namespace", "")
        return name, (getter(ns, name) if getter is not None and name else None)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A bound member may complete a held gang's count (upstream registers pod adds too)."""
        return [ClusterEventWithHint(ASSIGNED_POD_ADD, _same_group, same_pod_group=True)]

    # -- PreEnqueue -------------------------------------------------------------------------

    def pre_enqueue(self, pod_info: PodInfo) -> Status | None:
        """Runs for every created member and again for each held sibling when the gang's
        count is reached: the pod's group name is read once, the gates once per gate set."""
        name = pod_group_name(pod_info.pod)
        if not name:
            return None
        enabled, freely = self._gate_flags()
        if not enabled:
            return None
        handle = self.handle
        getter = handle.get_pod_group
        ns = pod_info.namespace
        pg = getter(ns, name) if getter is not None else None
        if pg is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, waiting_for_pod_group(name))
        least = gang_min_count(pg)
        if least is None or (freely and self._schedules_freely(pg)):
            return None
        state_of = handle.pod_group_state
        st = state_of(ns, name) if state_of is not None else None
        known = st.all_count() if st is not None else 0
        if known < least:
            return self._waiting_for_min_count
        return None

    def _gate_flags(self) -> tuple[bool, bool]:
        """(``GenericWorkload`` on, ``PodGroupReplacementsScheduleFreely`` on) for the handle's
        gates. A ``FeatureGate`` is immutable, so the answer is kept per gates object (the
        handle may be given another one: it is looked up again then)."""
        gates = self.handle.gates
        if gates is not self._flags_of or self._flags is None:
            self._flags = (
                gates is None or gates.enabled(GENERIC_WORKLOAD),
                gates is not None and gates.enabled(POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY),
            )
            self._flags_of = gates
        return self._flags

    # -- PlacementFeasible ------------------------------------------------------------------

    def placement_feasible(
        self, state: CycleState, group: PodGroupInfo, scheduled: int, remaining: int
    ) -> Status | None:
        if not is_gang(group.pod_group) or self._schedules_freely(group.pod_group):
            return None
        n = min_count(group.pod_group)
        if scheduled + remaining < n:
            return Status(Code.UNSCHEDULABLE, cannot_be_satisfied(n, scheduled, remaining))
        if scheduled < n:
            return Status(Code.WAIT, not_yet_satisfied(n, scheduled, remaining))
        return None

    def placement_feasible_waits_below(
        self, state: CycleState, group: PodGroupInfo, scheduled: int, remaining: int
    ) -> int:
        """gangplane: after :meth:`placement_feasible` said Wait for (``scheduled``, ``remaining``),
        the bound under which it says Wait again for every later (s, r) with ``s + r`` unchanged
        (each further pod placed): ``minCount``. The PodGroup search then asks once per gang
        instead of once per pod (5,000 Wait statuses, each with its message, for a big gang)."""
        if not is_gang(group.pod_group) or self._schedules_freely(group.pod_group):
            return 0
        n = min_count(group.pod_group)
        return n if scheduled < n <= scheduled + remaining else 0

    # -- Permit -----------------------------------------------------------------------------

    def permit(self, state: CycleState, pod_info: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """Runs for every member of a placed gang (5,000 times for a big one): the group's name,
        policy and the gates are each read once, as :meth:`pre_enqueue` reads them."""
        name = pod_group_name(pod_info.pod)
        getter = self.handle.get_pod_group
        if not name or getter is None:
            return None, 0.0
        ns = pod_info.namespace
        pg = getter(ns, name)
        if pg is None:
            return None, 0.0
        least = gang_min_count(pg)
        enabled, freely = self._gate_flags()
        if least is None or not enabled or (freely and self._schedules_freely(pg)):
            return None, 0.0
        state_of = self.handle.pod_group_state
        st = state_of(ns, name) if state_of is not None else None
        if st is not None and st.scheduled_count() >= least:
            self.allow_group(f"{ns}/{name}")
            return None, 0.0
        return Status(Code.WAIT, f"waiting for the gang of pod group {name!r} to be placed"), NO_TIMEOUT

    def allow_group(self, key: str) -> None:
        """Let every member of the group waiting at Permit go on to binding.

        Every waiting pod is looked at, in the order it began to wait (the order the members'
        binding cycles go on in); a pod is the group's when its namespace and
        ``podGroupName`` are the key's two halves (what ``pod_group_key(pod) == key`` tests,
        without building each waiting pod's key: a 5,000-pod gang's last member looks at 4,999).
        """
        fw = self.handle.framework
        if fw is None:
            return
        ns, _, name = key.partition("/")
        if not name:
            return  # no pod's group key has an empty name
        for wp in list(fw.waiting_pods.values()):
            pi = wp.pod_info
            if (
                pi.namespace == ns
                and ((pi.pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") == name
            ):
                wp.allow(NAME)


def _same_group(pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
    """Queue a held member only for a pod of its own group."""
    key = pod_group_key(pod)
    if key and isinstance(new, dict) and pod_group_key(new) == key:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: dict[str, Any], handle: Handle) -> GangScheduling:
    return GangScheduling(args, handle)
