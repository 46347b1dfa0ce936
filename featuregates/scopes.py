"""Which gate view each ``gangplane serve --<component>-feature-gates`` flag overrides.

Kubernetes gives every binary its own ``--feature-gates``; gangplane runs them all in one process,
so each component reads a *view* (``ControlPlane.gates_for(name)``) and these keys say which view a
per-component flag writes. kube-controller-manager is one binary holding many controllers, so its
key is a group: it applies to every component registered with ``group=CONTROLLER_MANAGER``, below
that controller's own key. The node agent stands in for the kubelet.
"""

from __future__ import annotations

APISERVER = "apiserver"
CONTROLLER_MANAGER = "kube-controller-manager"
SCHEDULER = "scheduler"
KUBELET = "node-agent"

#: flag prefix → gate-view key, in the order ``--help`` lists the flags
GATE_SCOPES: dict[str, str] = {
    "apiserver": APISERVER,
    "controller-manager": CONTROLLER_MANAGER,
    "scheduler": SCHEDULER,
    "kubelet": KUBELET,
}
