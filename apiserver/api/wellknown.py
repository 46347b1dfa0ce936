"""Well-known API constants (finalizers, annotations) shared by admission and the controllers.

In kube these live in ``k8s.io/api`` (e.g. ``scheduling/v1beta1``'s well-known names); here they
are defined once so a controller never imports the API server's admission plugins to learn them.
"""

from __future__ import annotations

#: KEP-5832: stamped on every new PodGroup by admission, removed by the PodGroup protection controller
PODGROUP_PROTECTION_FINALIZER = "scheduling.k8s.io/podgroup-protection"

#: KEP-6277: the annotation (and its value) on a Workload / PodGroup the StatefulSet controller
#: created; the ResourceClaim controller reads it for gangplane's StatefulSetWorkloadClaimRelease
WORKLOAD_MANAGED_BY_ANNOTATION = "scheduling.k8s.io/managed-by"
STATEFULSET_CONTROLLER_MANAGER = "statefulset-controller"
