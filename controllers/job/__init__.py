"""The Job controller (``job-controller``) and its KEP-5547 Workload integration."""

from controllers.job.controller import NAME, JobController

__all__ = ["NAME", "JobController"]
