"""The ``SchedulingRecord`` resource: gangplane's API group, its GVR and object names."""

from __future__ import annotations

from apiserver.client.interface import GVR

GROUP = "scheduling.gangplane.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "SchedulingRecord"
SCHEDULINGRECORDS = GVR(GROUP, VERSION, "schedulingrecords")
#: gangplane's ``/configz`` section saying what the scheduler keeps (``gangplane explain`` reads it)
CONFIGZ_SECTION = "gangplane.dev/schedulingRecords"
#: a DNS subdomain name has at most 253 characters
MAX_NAME = 253


def record_name(kind: str, name: str) -> str:
    """``pod.<name>`` / ``podgroup.<name>``: one record per subject, both kinds side by side in a namespace."""
    prefix = "pod." if kind == "Pod" else "podgroup."
    return (prefix + name)[:MAX_NAME]
