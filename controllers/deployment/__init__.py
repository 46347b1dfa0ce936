"""Deployment controller: rolling update, Recreate, revisions, progress deadline."""

from controllers.deployment.controller import NAME, DeploymentController

__all__ = ["NAME", "DeploymentController"]
