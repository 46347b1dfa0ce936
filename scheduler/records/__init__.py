"""Scheduling records: why every pod and PodGroup landed where it did, attempt by attempt (gangplane's).

kube-scheduler keeps none of this: a user sees the FitError text and events. The
:class:`~scheduler.records.recorder.Recorder` collects, for each attempt of each pod and each
PodGroup cycle, what the Filter plugins rejected (per plugin and reason, with node names), each
Score plugin's raw and normalised score on the best nodes (the rest summarised), the placements a
PodGroup search considered and why each was dropped, the chosen node(s), nominations, and a
preemption's candidates and victims. It writes them as ``SchedulingRecord`` objects of
gangplane's API group ``scheduling.gangplane.dev/v1alpha1`` (:mod:`.api`), owner-referenced to
the pod or PodGroup so the garbage collector removes them, bounded per subject and overall.
:mod:`.summary` turns cycle data into the bounded record fields; :mod:`.explain` renders a
record as the table ``gangplane explain`` prints.
"""

from scheduler.records.api import SCHEDULINGRECORDS, record_name
from scheduler.records.recorder import Recorder, RecordLimits

__all__ = ["SCHEDULINGRECORDS", "Recorder", "RecordLimits", "record_name"]
