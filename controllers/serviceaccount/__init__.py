"""ServiceAccounts controller (kube's ``pkg/controller/serviceaccount/serviceaccounts_controller.go``).

Every active namespace has a ``default`` ServiceAccount: it is created when the namespace appears
and recreated when somebody deletes it. Informers: Namespaces and ServiceAccounts; both enqueue the
namespace name; ``sync`` creates what the cache does not show. A terminating namespace gets nothing
(the API refuses with 403, which is not an error here), and an AlreadyExists from a lagging cache is
success.
"""

from __future__ import annotations

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import EventRecorder
from apiserver.client.informer import Informer, InformerFactory
from apiserver.client.interface import NAMESPACES, SERVICEACCOUNTS, Client
from apiserver.meta import Clock, name_of, namespace_of
from controllers.base import Controller
from controllers.metrics import ControllerMetrics

NAME = "serviceaccount-controller"
#: kube's ``DefaultServiceAccountsControllerOptions``: one account named ``default``
DEFAULT_SERVICE_ACCOUNTS = ("default",)


class ServiceAccountsController(Controller):
    name = NAME
    workers = 1  # --concurrent-serviceaccount-syncs

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
        service_accounts: tuple[str, ...] = DEFAULT_SERVICE_ACCOUNTS,
    ) -> None:
        self.service_accounts = service_accounts
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    def setup(self) -> None:
        self.namespaces: Informer = self.informers.informer(NAMESPACES)
        self.accounts: Informer = self.informers.informer(SERVICEACCOUNTS)
        self.namespaces.add_event_handler(
            lambda ns: self.enqueue(name_of(ns)), lambda old, new: self.enqueue(name_of(new))
        )
        self.accounts.add_event_handler(None, None, self._account_deleted)

    def _account_deleted(self, sa: Obj) -> None:
        if name_of(sa) in self.service_accounts:
            self.enqueue(namespace_of(sa))

    async def on_synced(self) -> None:
        for key in self.namespaces.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)

    async def sync(self, key: str) -> None:
        ns = self.namespaces.get(key)
        if ns is None or (ns.get("status") or {}).get("phase", "Active") != "Active":
            return
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        for sa_name in self.service_accounts:
            if self.accounts.get_by_name(key, sa_name) is not None:
                continue
            body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa_name}}
            try:
                await self.client.create(SERVICEACCOUNTS, body, key)
            except errors.StatusError as e:
                if errors.is_already_exists(e) or e.code == 403:
                    continue
                raise
