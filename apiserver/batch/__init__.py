"""batch/v1 API helpers shared by the API server's strategies and the Job/CronJob controllers.

Pure functions and constants only (no I/O, no registry): the well-known label and annotation
keys (:mod:`apiserver.batch.labels`), and cron schedule parsing (:mod:`apiserver.batch.cron`). The KEP-5547
``WorkloadItem`` of a Job lives beside the StatefulSet's in :mod:`apiserver.workloadbuilder.job`.
"""
