"""gangplane: a Kubernetes control plane in one Python process, for KEP-6277 workload-aware scheduling.

What users import lives here: ``from gangplane import ControlPlane`` for the whole cluster in
process, the ``gangplane`` command (``gangplane.cli``) and the pytest plugin (``gangplane.testing``).
The names are resolved on first use so that ``import gangplane`` (and ``gangplane --help``) stays
cheap: the control plane pulls in the API server, every component and uvicorn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components

__all__ = ["ControlPlane", "ControlPlaneOptions", "default_components"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gangplane import controlplane

        return getattr(controlplane, name)
    raise AttributeError(f"module 'gangplane' has no attribute {name!r}")
