"""The token controller (kube's ``pkg/controller/serviceaccount/tokens_controller.go``).

A Secret of type ``kubernetes.io/service-account-token`` whose
``kubernetes.io/service-account.name`` annotation names a ServiceAccount gets a long-lived token
written into it: ``data.token`` (a JWT with kube's legacy claims, signed with the cluster's
service-account key), ``data.namespace``, ``data["ca.crt"]`` when the API server is served over
TLS, and the account's uid in ``kubernetes.io/service-account.uid``. This is how charts and
operators still get a token that does not expire (kube has not generated these Secrets by itself
since 1.24; a user creates one and the controller fills it).

The Secret lives only as long as its account: a Secret naming an account that does not exist, or
one with another uid than the annotation records, is deleted (with the Secret's uid as a
precondition), and deleting an account deletes its token Secrets. The API server's authenticator
(:mod:`apiserver.auth.serviceaccount`) accepts the token while the Secret still holds it and the
account is live.

Keys: ``("secret", namespace, name)`` and ``("account", namespace, name, uid)``, each synced
from the informers' caches; a cache miss on the account is checked against the API before a
Secret is deleted, as kube does, so a lagging cache never deletes a good token.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.auth.serviceaccount import (
    CA_KEY,
    NAMESPACE_KEY,
    SA_NAME_ANNOTATION,
    SA_UID_ANNOTATION,
    SERVICE_ACCOUNT_TOKEN_TYPE,
    TOKEN_KEY,
    legacy_claims,
)
from apiserver.client.events import EventRecorder
from apiserver.client.informer import Informer, InformerFactory
from apiserver.client.interface import SECRETS, SERVICEACCOUNTS, Client
from apiserver.meta import Clock, name_of, namespace_of
from controllers.base import Controller
from controllers.metrics import ControllerMetrics

NAME = "serviceaccount-token-controller"
#: Secrets indexed by the account they name: ``<namespace>/<account name>``
BY_ACCOUNT = "serviceaccount"


def token_secret_account(secret: Obj) -> tuple[str, str] | None:
    """(account name, recorded uid or "") of a service-account-token Secret; None for other Secrets."""
    if secret.get("type") != SERVICE_ACCOUNT_TOKEN_TYPE:
        return None
    ann = (secret.get("metadata") or {}).get("annotations") or {}
    name = ann.get(SA_NAME_ANNOTATION)
    if not isinstance(name, str) or not name:
        return None
    uid = ann.get(SA_UID_ANNOTATION)
    return name, uid if isinstance(uid, str) else ""


def belongs_to(secret: Obj, account: Obj) -> bool:
    """kube's ``IsServiceAccountToken``: the Secret names the account and, if it records one, its uid."""
    named = token_secret_account(secret)
    if named is None or namespace_of(secret) != namespace_of(account) or named[0] != name_of(account):
        return False
    return not named[1] or named[1] == (account.get("metadata") or {}).get("uid")


def missing_data(secret: Obj, root_ca: bytes) -> tuple[bool, bool, bool]:
    """(needs ca.crt, needs namespace, needs token), kube's ``secretUpdateNeeded``."""
    data = secret.get("data") if isinstance(secret.get("data"), dict) else {}
    encoded_ca = base64.b64encode(root_ca).decode() if root_ca else ""
    return (
        bool(root_ca) and data.get(CA_KEY) != encoded_ca,
        not data.get(NAMESPACE_KEY),
        not data.get(TOKEN_KEY),
    )


class TokensController(Controller):
    name = NAME
    workers = 1  # --concurrent-serviceaccount-token-syncs

    def __init__(
        self,
        client: Client,
        *,
        sign: Callable[[Obj], str],
        root_ca: Callable[[], bytes] = bytes,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
    ) -> None:
        #: ``sign(claims) -> JWT`` with the cluster's service-account key
        self.sign = sign
        #: ``root_ca() -> PEM bytes`` read at each sync: the API server may start serving TLS later
        self.root_ca = root_ca
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    def setup(self) -> None:
        self.accounts: Informer = self.informers.informer(SERVICEACCOUNTS)
        self.secrets: Informer = self.informers.informer(SECRETS)

        def account_index(secret: Obj) -> list[str]:
            named = token_secret_account(secret)
            return [f"{namespace_of(secret)}/{named[0]}"] if named else []

        self.secrets.add_indexer(BY_ACCOUNT, account_index)
        self.secrets.add_event_handler(self._secret_changed, lambda old, new: self._secret_changed(new))
        self.accounts.add_event_handler(
            lambda sa: self._account_changed(sa),
            lambda old, new: self._account_changed(new),
            self._account_deleted,
        )

    def _secret_changed(self, secret: Obj) -> None:
        if token_secret_account(secret) is not None:
            self.enqueue(("secret", namespace_of(secret), name_of(secret)))

    def _account_changed(self, sa: Obj) -> None:
        # an account that appears late (or is recreated) completes - or removes - the Secrets naming it
        for secret in self.secrets.by_index(BY_ACCOUNT, f"{namespace_of(sa)}/{name_of(sa)}"):
            self._secret_changed(secret)

    def _account_deleted(self, sa: Obj) -> None:
        uid = (sa.get("metadata") or {}).get("uid", "")
        self.enqueue(("account", namespace_of(sa), name_of(sa), uid))

    async def sync(self, key: Any) -> None:
        if key[0] == "account":
            await self._delete_tokens_of(*key[1:])
        else:
            await self._sync_secret(key[1], key[2])

    async def _delete_tokens_of(self, namespace: str, name: str, uid: str) -> None:
        """The account is gone: so are the token Secrets that name it (and its uid, if they record one)."""
        if self.accounts.get_by_name(namespace, name) is not None:
            return  # recreated meanwhile: its Secrets are synced on their own keys
        gone = {"metadata": {"name": name, "namespace": namespace, "uid": uid}}
        for secret in self.secrets.by_index(BY_ACCOUNT, f"{namespace}/{name}"):
            if belongs_to(secret, gone):
                await self._delete(secret)

    async def _account(self, namespace: str, name: str) -> Obj | None:
        """The account from the cache, or - on a miss - from the API (a new account the cache lags on)."""
        sa = self.accounts.get_by_name(namespace, name)
        if sa is not None:
            return sa
        try:
            return await self.client.get(SERVICEACCOUNTS, name, namespace)
        except errors.StatusError as e:
            if e.code == 404:
                return None
            raise

    async def _sync_secret(self, namespace: str, name: str) -> None:
        secret = self.secrets.get_by_name(namespace, name)
        named = token_secret_account(secret) if secret is not None else None
        if secret is None or named is None:
            return
        if (secret.get("metadata") or {}).get("deletionTimestamp"):
            return
        sa = await self._account(namespace, named[0])
        if sa is None or not belongs_to(secret, sa):
            await self._delete(secret)
            return
        if any(missing_data(secret, self.root_ca())):
            await self._fill(namespace, name)

    async def _fill(self, namespace: str, name: str) -> None:
        """Write what the Secret lacks into the live Secret (kube's ``generateTokenIfNeeded``)."""
        try:
            live = await self.client.get(SECRETS, name, namespace)
        except errors.StatusError as e:
            if e.code == 404:
                return
            raise
        named = token_secret_account(live)
        if named is None:
            return
        sa = await self._account(namespace, named[0])
        if sa is None or not belongs_to(live, sa):
            return  # synced again by the change that made it so
        root_ca = self.root_ca()
        needs_ca, needs_namespace, needs_token = missing_data(live, root_ca)
        if not (needs_ca or needs_namespace or needs_token):
            return
        data = dict(live.get("data") or {})
        if needs_ca:
            data[CA_KEY] = base64.b64encode(root_ca).decode()
        if needs_namespace:
            data[NAMESPACE_KEY] = base64.b64encode(namespace.encode()).decode()
        if needs_token:
            sa_uid = (sa.get("metadata") or {}).get("uid", "")
            token = self.sign(legacy_claims(namespace, name_of(sa), sa_uid, name))
            data[TOKEN_KEY] = base64.b64encode(token.encode()).decode()
        md = live.setdefault("metadata", {})
        md["annotations"] = {
            **(md.get("annotations") or {}),
            SA_NAME_ANNOTATION: name_of(sa),
            SA_UID_ANNOTATION: (sa.get("metadata") or {}).get("uid", ""),
        }
        live["data"] = data
        await self.client.update(SECRETS, live, namespace)  # a conflict retries the key with backoff

    async def _delete(self, secret: Obj) -> None:
        md = secret.get("metadata") or {}
        try:
            await self.client.delete(
                SECRETS, md.get("name", ""), md.get("namespace", ""), preconditions={"uid": md.get("uid", "")}
            )
        except errors.StatusError as e:
            if e.code not in (404, 409):  # already gone, or a new Secret took the name
                raise
