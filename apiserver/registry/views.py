"""Views of one storage through another API group or version (events.k8s.io/v1 events over core/v1
events, autoscaling/v1 HPAs over the stored autoscaling/v2 ones, the served versions of a custom
resource over its storage: a ``ResourceDef.converter``)."""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.rest.resources import ResourceDef


def view_as(rd: ResourceDef, stored: Obj) -> Obj:
    if rd.converter is not None:
        return rd.converter.to_view(stored)
    if rd.group == "events.k8s.io":
        from apiserver.registry.strategies.misc import core_event_to_events_v1

        return core_event_to_events_v1(stored)
    if rd.group == "autoscaling" and rd.version == "v1":
        from apiserver.registry.strategies.autoscaling_v1 import hpa_v2_to_v1

        return hpa_v2_to_v1(stored)
    return stored


def store_as(rd: ResourceDef, obj: Obj) -> Obj:
    if rd.converter is not None:
        return rd.converter.from_view(obj)
    if rd.group == "events.k8s.io":
        from apiserver.registry.strategies.misc import events_v1_to_core_event

        return events_v1_to_core_event(obj)
    if rd.group == "autoscaling" and rd.version == "v1":
        from apiserver.registry.strategies.autoscaling_v1 import hpa_v1_to_v2

        return hpa_v1_to_v2(obj)
    return obj
