"""batch/v1 API helpers shared by the API server's strategies and the Job/CronJob controllers.

Pure functions and constants only (no I/O, no registry): the well-known label and annotation
keys (:mod:`apiserver.batch.labels`), cron schedule parsing (:mod:`apiserver.batch.cron`) and the
KEP-5547 ``WorkloadItem`` of a Job (:mod:`apiserver.batch.scheduling`), which admission and the
Job controller must compile identically.
"""
