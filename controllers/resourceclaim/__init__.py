"""The ResourceClaim controller (kube-controller-manager's ``resource-claim-controller``); see :mod:`.controller`."""

from controllers.resourceclaim.controller import NAME, ResourceClaimController

__all__ = ["NAME", "ResourceClaimController"]
