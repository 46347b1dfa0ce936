"""Who a request is from: ``authentication.k8s.io/v1`` UserInfo and the identities gangplane knows.

Pure data, shared by the front door (which finds the identity), the registry (which hands it to
review strategies such as SelfSubjectReview) and the authorizer (:mod:`apiserver.auth`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class UserInfo:
    """An authenticated identity (kube's ``user.Info``): what authorization and audit see of a requester."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


#: the kubeconfig user of ``gangplane serve``: kubeadm's (and kind's) admin.conf user, a cluster admin
#: through the ``kubeadm:cluster-admins`` ClusterRoleBinding rather than the ``system:masters``
#: super-user group, so RBAC decides its requests like everyone else's
ADMIN = UserInfo("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"))
ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated",))
#: in-process clients (components, tests): the API server's own loopback identity, a member of
#: ``system:masters`` like kube-apiserver's loopback client, so no stored policy can lock it out
LOOPBACK = UserInfo("system:apiserver", ("system:masters", "system:authenticated"))
