"""Who a request is from: ``authentication.k8s.io/v1`` UserInfo and the identities gangplane knows.

Pure data, shared by the front door (which finds the identity), the registry (which hands it to
review strategies such as SelfSubjectReview) and, later, authorization.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class UserInfo:
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


#: the kubeconfig user of ``gangplane serve``: a cluster admin, as kind's kubeconfig user is
ADMIN = UserInfo("kubernetes-admin", ("kubeadm:cluster-admins", "system:masters", "system:authenticated"))
ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated",))
#: in-process clients (components, tests): the API server's own loopback identity
LOOPBACK = UserInfo("system:apiserver", ("system:masters", "system:authenticated"))
