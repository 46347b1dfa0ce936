"""One informer per resource for every controller of a process, as kube-controller-manager has.

kube-controller-manager builds ONE ``SharedInformerFactory`` and hands it to every controller it
runs: each resource is listed and watched once, decoded and indexed once, and every controller
registers its own event handlers on the shared informer. :class:`SharedInformerFactory` is that
factory; :meth:`SharedInformerFactory.for_component` gives one controller its
:class:`ComponentInformers`, an :class:`~apiserver.client.informer.InformerFactory` whose
informers are :class:`InformerView`\\ s of the shared ones. A view reads the shared cache and
records the handlers registered through it, so that a controller stopped on its own
(``ControlPlane.stop_component``, a restart from the UI or CLI) removes exactly its handlers and
leaves the informers serving the others. An informer no controller uses any more is stopped, so
a controller started again after every user stopped lists afresh, as before.

Sharing is what makes the cache's read-only rule matter: a handler or lister that changed a
cached object would change it for every controller (the informer docstring and the test suite's
mutation detector).
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.informer import (
    AddHandler,
    DeleteHandler,
    HandlerRegistration,
    IndexFunc,
    Informer,
    InformerFactory,
    UpdateHandler,
    stop_informer,
)
from apiserver.client.interface import GVR, Client

#: the user agent of the shared informers' list/watch requests (kube-controller-manager's
#: ``rootClientBuilder.ClientOrDie("shared-informers")``)
SHARED_INFORMERS_USER_AGENT = "shared-informers"

_Key = tuple[GVR, str, str, str]


class SharedInformerFactory:
    """The informers one process's controllers share, with who uses each (see module docstring).

    An informer is kept while some component uses it (has asked for it and not stopped) and runs
    while some of those want it running: a component may stop one informer on its own and start
    it again later (the garbage collector does, for a custom resource whose CRD went away).
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self._informers: dict[_Key, Informer] = {}
        self._users: dict[_Key, set[ComponentInformers]] = {}
        self._running: dict[_Key, set[InformerView]] = {}

    def for_component(self, name: str) -> ComponentInformers:
        """A factory for component ``name``: its informers are views of this factory's."""
        return ComponentInformers(self, name)

    def informers(self) -> builtins.list[Informer]:
        """The shared informers some component uses now."""
        return list(self._informers.values())

    def _acquire(self, key: _Key, user: ComponentInformers) -> Informer:
        inf = self._informers.get(key)
        if inf is None:
            gvr, namespace, label_selector, field_selector = key
            inf = Informer(self.client, gvr, namespace, label_selector, field_selector)
            self._informers[key] = inf
        self._users.setdefault(key, set()).add(user)
        return inf

    def _want_running(self, key: _Key, view: InformerView) -> asyncio.Task[None]:
        self._running.setdefault(key, set()).add(view)
        return self._informers[key].start()

    async def _not_running(self, key: _Key, view: InformerView) -> None:
        """``view`` no longer wants the informer running; it stops when nobody else does."""
        wanting = self._running.get(key)
        if wanting is None or view not in wanting:
            return
        wanting.discard(view)
        if not wanting:
            del self._running[key]
            inf = self._informers.get(key)
            if inf is not None:
                await stop_informer(inf)
                if self._running.get(key) and self._informers.get(key) is inf:
                    inf.start()  # wanted again while it was stopping

    async def _release(self, key: _Key, view: InformerView, user: ComponentInformers) -> None:
        await self._not_running(key, view)
        users = self._users.get(key)
        if users is None:
            return
        users.discard(user)
        if not users:
            del self._users[key]
            self._informers.pop(key, None)


class ComponentInformers(InformerFactory):
    """One component's share of a :class:`SharedInformerFactory`.

    ``start`` starts the shared informers it uses (those already running stay as they are) and
    ``wait_for_sync`` waits for those only; ``stop`` removes the component's handlers and gives its
    informers back (an informer nobody uses any more stops).
    """

    def __init__(self, shared: SharedInformerFactory, name: str) -> None:
        super().__init__(shared.client)
        self.shared = shared
        self.name = name

    def _new_informer(self, key: _Key) -> Informer:
        return InformerView(self.shared, key, self.shared._acquire(key, self))

    async def stop(self) -> None:
        self._started = False
        views, self._informers = self._informers, {}
        for view in views.values():
            assert isinstance(view, InformerView)
            view.remove_handlers()
        for key, view in views.items():
            assert isinstance(view, InformerView)
            view.released = True
            await self.shared._release(key, view, self)


class InformerView(Informer):
    """A component's handle on a shared :class:`Informer`.

    Reads (``get``, ``list``, ``by_index`` …) and indexers go to the shared informer; handlers
    registered through the view are remembered so that :meth:`remove_handlers` (the component
    stopping) takes exactly those away. ``start``/``stop`` on a view say whether this component
    wants the informer running (its handlers stay, as a plain informer's do): the shared informer
    stops only when no view wants it. Attributes not defined here (``gvr``,
    ``resource_version`` …) are the shared informer's.
    """

    # no super().__init__: the view holds no cache of its own
    def __init__(self, factory: SharedInformerFactory, key: _Key, shared: Informer) -> None:
        self.factory = factory
        self.key = key
        self.shared = shared
        self._registrations: list[HandlerRegistration] = []
        #: set when the component gave the informer back (its factory stopped)
        self.released = False

    def __getattr__(self, name: str) -> Any:
        if name == "shared":  # not set yet (a half-built view): no recursion
            raise AttributeError(name)
        return getattr(self.shared, name)

    def __repr__(self) -> str:
        return f"<InformerView of {self.shared.gvr}>"

    # ------------------------------------------------------------------ handlers and indexers
    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        self.shared.add_indexer(name, fn)

    def add_event_handler(
        self,
        on_add: AddHandler | None = None,
        on_update: UpdateHandler | None = None,
        on_delete: DeleteHandler | None = None,
    ) -> HandlerRegistration:
        reg = self.shared.add_event_handler(on_add, on_update, on_delete)
        self._registrations.append(reg)
        return reg

    def remove_event_handler(self, reg: HandlerRegistration) -> None:
        self.shared.remove_event_handler(reg)
        self._registrations = [r for r in self._registrations if r is not reg]

    def remove_handlers(self) -> None:
        """Take away every handler registered through this view."""
        for reg in self._registrations:
            self.shared.remove_event_handler(reg)
        self._registrations = []

    # ------------------------------------------------------------------ reads
    def get(self, key: str) -> Obj | None:
        return self.shared.get(key)

    def get_by_name(self, namespace: str, name: str) -> Obj | None:
        return self.shared.get_by_name(namespace, name)

    def list(self, namespace: str = "") -> builtins.list[Obj]:
        return self.shared.list(namespace)

    def keys(self) -> builtins.list[str]:
        return self.shared.keys()

    def by_index(self, name: str, value: str) -> builtins.list[Obj]:
        return self.shared.by_index(name, value)

    def count_by_index(self, name: str, value: str) -> int:
        return self.shared.count_by_index(name, value)

    def index_keys(self, name: str, value: str) -> set[str]:
        return self.shared.index_keys(name, value)

    def __len__(self) -> int:
        return len(self.shared)

    def has_synced(self) -> bool:
        return self.shared.has_synced()

    async def wait_for_sync(self, timeout: float = 30.0) -> None:
        await self.shared.wait_for_sync(timeout)

    def handler_count(self) -> int:
        return len(self._registrations)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> asyncio.Task[None]:
        """Want the shared informer running. A view whose component stopped starts nothing (a late
        callback of a stopped controller must not run an informer nobody owns): its task is done."""
        if self.released:
            return asyncio.get_running_loop().create_task(asyncio.sleep(0))
        return self.factory._want_running(self.key, self)

    async def stop(self) -> None:
        await self.factory._not_running(self.key, self)


__all__ = [
    "SHARED_INFORMERS_USER_AGENT",
    "ComponentInformers",
    "InformerView",
    "SharedInformerFactory",
]
