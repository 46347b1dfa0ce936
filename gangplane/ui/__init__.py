"""gangplane's live view in the browser (``/ui/``): racks, nodes, gangs and events as they change.

An addition of gangplane's (Kubernetes has no such thing in its API server): ``gangplane serve
--ui`` (the default) serves it, the pytest plugin and ``gangplane bench`` print its login URL with
``--ui``. See docs/ui.md.
"""

from gangplane.ui.app import UI
from gangplane.ui.sessions import UISessions

__all__ = ["UI", "UISessions"]
