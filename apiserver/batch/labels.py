"""Well-known batch/v1 keys, spelled as ``k8s.io/api/batch/v1`` spells them."""

from __future__ import annotations

LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
#: annotation and (since 1.28) label of an Indexed Job's pods
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: per-index failure count of a pod (backoffLimitPerIndex)
JOB_INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
#: finalizer that keeps a pod until the Job controller has counted it
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: annotation on Jobs created by a CronJob: the scheduled time (RFC 3339)
CRONJOB_SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"
