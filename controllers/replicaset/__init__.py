"""ReplicaSet and ReplicationController controllers."""

from controllers.replicaset.controller import (
    NAME,
    RC_NAME,
    REPLICATIONCONTROLLERS,
    ReplicaSetController,
    ReplicationManager,
)

__all__ = ["NAME", "RC_NAME", "REPLICATIONCONTROLLERS", "ReplicaSetController", "ReplicationManager"]
