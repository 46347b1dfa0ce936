"""The TTL-after-finished controller (``ttl-after-finished-controller``)."""

from controllers.ttlafterfinished.controller import NAME, TTLAfterFinishedController

__all__ = ["NAME", "TTLAfterFinishedController"]
