"""The CronJob controller (``cronjob-controller``)."""

from controllers.cronjob.controller import NAME, CronJobController

__all__ = ["NAME", "CronJobController"]
