"""DaemonSet controller: one pod per eligible node, rolling update with maxUnavailable/maxSurge."""

from controllers.daemonset.controller import NAME, DaemonSetsController

__all__ = ["NAME", "DaemonSetsController"]
