"""Bound service-account tokens: the JWTs ``serviceaccounts/token`` issues, and their authenticator.

Shaped like kube's ``pkg/serviceaccount`` (``claims.go``, ``jwt.go``): an RS256 JWT with the
registered claims (``iss``, ``sub``, ``aud``, ``iat``, ``nbf``, ``exp``, ``jti``) and the private
``kubernetes.io`` claim naming the namespace, the ServiceAccount and the object the token is
bound to. A token authenticates as ``system:serviceaccount:<ns>:<name>`` with the groups
``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and ``system:authenticated`` only
while it is unexpired, meant for this server's audience, and its ServiceAccount — and the Pod or
Secret it is bound to — still exist with the uids it names (deleting them revokes it).

The key that signs and checks them is a :class:`SigningKey`: read from
``--service-account-signing-key-file`` (kube's flag), kept in the ``--data-dir`` so tokens outlive
a restart as they do on a real cluster, or made for the process (in memory, for tests).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apiserver.api.types import Obj
from apiserver.api.users import UserInfo
from apiserver.auth import rbac

ISSUER = "https://kubernetes.default.svc.cluster.local"
#: the issuer of the long-lived tokens the token controller writes into Secrets (kube's ``LegacyIssuer``)
LEGACY_ISSUER = "kubernetes/serviceaccount"
#: the Secret type and the keys the token controller fills (kube's ``v1.ServiceAccountTokenKey`` …)
SERVICE_ACCOUNT_TOKEN_TYPE = "kubernetes.io/service-account-token"
SA_NAME_ANNOTATION = "kubernetes.io/service-account.name"
SA_UID_ANNOTATION = "kubernetes.io/service-account.uid"
TOKEN_KEY, CA_KEY, NAMESPACE_KEY = "token", "ca.crt", "namespace"
#: labels of legacy token tracking and clean-up (kube's ``LastUsedLabelKey``, ``InvalidSinceLabelKey``)
LAST_USED_LABEL = "kubernetes.io/legacy-token-last-used"
INVALID_SINCE_LABEL = "kubernetes.io/legacy-token-invalid-since"
_LEGACY = "kubernetes.io/serviceaccount/"
#: the API server's own audiences (kube's ``--api-audiences`` defaults to the issuer)
API_AUDIENCES = (ISSUER,)
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
POD_NAME = "authentication.kubernetes.io/pod-name"
POD_UID = "authentication.kubernetes.io/pod-uid"
NODE_NAME = "authentication.kubernetes.io/node-name"
NODE_UID = "authentication.kubernetes.io/node-uid"

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import rsa

# PyJWT and cryptography are imported where a token is first signed or checked, not at start-up
# (about 60 ms): a server whose clients present no service-account token never needs them.

#: ``lookup(group, plural, namespace, name) -> object | None``
Lookup = Callable[[str, str, str, str], Obj | None]
#: ``mark_used(namespace, secret name, uid, day)``: labels a legacy token's Secret with the day it was used
MarkUsed = Callable[[str, str, str, str], None]


def legacy_claims(namespace: str, account: str, account_uid: str, secret: str) -> Obj:
    """The claims of a Secret-held token (kube's ``LegacyClaims``): no audience, no expiry."""
    return {
        "iss": LEGACY_ISSUER,
        f"{_LEGACY}namespace": namespace,
        f"{_LEGACY}secret.name": secret,
        f"{_LEGACY}service-account.name": account,
        f"{_LEGACY}service-account.uid": account_uid,
        "sub": rbac.service_account_username(namespace, account),
    }


def secret_token(secret: Obj) -> str:
    """The token a service-account-token Secret holds (its ``data.token``, decoded), or ""."""
    raw = ((secret.get("data") or {}) if isinstance(secret.get("data"), dict) else {}).get(TOKEN_KEY)
    if not isinstance(raw, str):
        return ""
    try:
        return base64.b64decode(raw, validate=True).decode("utf-8", "replace")
    except ValueError:
        return ""


class SigningKeyError(ValueError):
    """A signing key file that cannot be used (the server refuses to start, naming the file)."""


class SigningKey:
    """An RSA private key and its ``kid`` (the SHA-256 of the public key, as kube derives it).

    Made lazily: PyJWT and cryptography are imported only when a token is first signed or
    checked. ``path`` is a PEM file (PKCS#1 or PKCS#8) to read, or to create (owner-only) when
    ``create`` is set and it does not exist yet — the data dir's key, made on the first start.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, create: bool = False) -> None:
        self.path = Path(path) if path is not None else None
        self.create = create
        self._loaded: tuple[rsa.RSAPrivateKey, str] | None = None

    def check(self) -> None:
        """Load (or create) the key now: a bad file stops the start with :class:`SigningKeyError`."""
        self.key_and_kid()

    def key_and_kid(self) -> tuple[rsa.RSAPrivateKey, str]:
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded

    def _load(self) -> tuple[rsa.RSAPrivateKey, str]:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key: Any
        if self.path is None or (self.create and not self.path.exists()):
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            if self.path is not None:
                pem = key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
                self._write_new(pem)
        else:
            try:
                pem = self.path.read_bytes()
            except OSError as e:
                raise SigningKeyError(
                    f"cannot read service account key file {self.path}: {e.strerror}"
                ) from None
            try:
                key = serialization.load_pem_private_key(pem, password=None)
            except (ValueError, TypeError) as e:
                raise SigningKeyError(
                    f"service account key file {self.path} holds no unencrypted PEM private key: {e}"
                ) from None
            if not isinstance(key, rsa.RSAPrivateKey):
                raise SigningKeyError(f"service account key file {self.path} holds no RSA private key")
        der = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        kid = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
        return key, kid

    def _write_new(self, pem: bytes) -> None:
        assert self.path is not None
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)  # whole or absent, even after a crash
        except OSError as e:
            raise SigningKeyError(
                f"cannot write service account key file {self.path}: {e.strerror}"
            ) from None

    def sign(self, claims: Obj) -> str:
        import jwt

        key, kid = self.key_and_kid()
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


class InvalidToken(Exception):
    """A token that is a service-account JWT of this server but no longer (or never) valid."""


class ServiceAccountTokens:
    """The JWT token authenticator (kube's ``serviceaccount.JWTTokenAuthenticator``)."""

    def __init__(
        self,
        lookup: Lookup,
        now: Callable[[], float],
        audiences: tuple[str, ...] = API_AUDIENCES,
        key: SigningKey | None = None,
        mark_used: MarkUsed | None = None,
    ):
        self._lookup = lookup
        self._now = now
        #: records a legacy token's use on its Secret (kube's legacy token tracking); None: not tracked
        self._mark_used = mark_used
        self.audiences = audiences
        #: signs the tokens ``serviceaccounts/token`` issues and checks those presented
        self.key = key or SigningKey()

    def sign(self, claims: Obj) -> str:
        return self.key.sign(claims)

    def __call__(self, token: str) -> UserInfo | None:
        """A front-door authenticator: the identity, or None for anything that is not valid here."""
        try:
            user, _ = self.authenticate(token, self.audiences)
        except InvalidToken:
            return None
        return user

    def authenticate(self, token: str, audiences: tuple[str, ...]) -> tuple[UserInfo | None, list[str]]:
        """(identity, audiences it is valid for); (None, []) when the token is not one of ours.

        Raises :class:`InvalidToken` with the reason when it is ours but no longer good.
        """
        if token.count(".") != 2:
            return None, []
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return None, []
        if unverified.get("iss") not in (ISSUER, LEGACY_ISSUER):
            return None, []
        key, kid = self.key.key_and_kid()
        if header.get("kid") not in (None, kid):
            raise InvalidToken("square/go-jose: error in cryptographic primitive")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.public_key(),
                algorithms=["RS256"],
                options={"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False},
            )
        except jwt.PyJWTError as e:
            raise InvalidToken("square/go-jose: error in cryptographic primitive") from e
        if claims.get("iss") == LEGACY_ISSUER:
            # valid for the API server's own audiences, as kube's implicit audiences make it
            return self._legacy_user(claims, token), list(audiences)
        now = self._now()
        if isinstance(claims.get("exp"), (int, float)) and now > claims["exp"]:
            raise InvalidToken("service account token has expired")
        if isinstance(claims.get("nbf"), (int, float)) and now < claims["nbf"] - 60:
            raise InvalidToken("service account token is not valid yet")
        aud = claims.get("aud")
        token_audiences = [aud] if isinstance(aud, str) else [a for a in aud or [] if isinstance(a, str)]
        valid_for = [a for a in audiences if a in token_audiences]
        if not valid_for:
            raise InvalidToken(
                f"token audiences {rbac._go_quote_list(token_audiences)} is invalid for the target audiences "
                f"{rbac._go_quote_list(list(audiences))}"
            )
        return self._user(claims), valid_for

    def _legacy_user(self, claims: dict[str, Any], token: str) -> UserInfo:
        """kube's legacy validator: the Secret must still hold this very token, and its account be live."""

        def claim(name: str, what: str) -> str:
            value = claims.get(f"{_LEGACY}{name}")
            if not isinstance(value, str) or not value:
                raise InvalidToken(f"{what} claim is missing")
            return value

        ns = claim("namespace", "namespace")
        secret_name = claim("secret.name", "secretName")
        name = claim("service-account.name", "serviceAccountName")
        uid = claim("service-account.uid", "serviceAccountUID")
        if claims.get("sub") != rbac.service_account_username(ns, name):
            raise InvalidToken("sub claim is invalid")
        secret = self._lookup("", "secrets", ns, secret_name)
        if secret is None or (secret.get("metadata") or {}).get("deletionTimestamp"):
            raise InvalidToken("Token has been invalidated")
        if not hmac.compare_digest(secret_token(secret).encode(), token.encode()):
            raise InvalidToken("Token does not match server's copy")
        sa = self._lookup("", "serviceaccounts", ns, name)
        if sa is None:
            raise InvalidToken(f'serviceaccounts "{name}" not found')
        sa_md = sa.get("metadata") or {}
        if sa_md.get("deletionTimestamp"):
            raise InvalidToken(f"ServiceAccount {ns}/{name} has been deleted")
        if sa_md.get("uid") != uid:
            raise InvalidToken(f"ServiceAccount UID ({sa_md.get('uid')}) does not match claim ({uid})")
        labels = (secret.get("metadata") or {}).get("labels") or {}
        self._track_use(secret)
        if labels.get(INVALID_SINCE_LABEL):
            raise InvalidToken(
                f"the token in secret {ns}/{secret_name} for service account {ns}/{name} has been marked "
                "invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, "
                f"or remove the '{INVALID_SINCE_LABEL}' label from the secret to temporarily allow use "
                "of this token"
            )
        groups = (*rbac.service_account_groups(ns), "system:authenticated")
        return UserInfo(rbac.service_account_username(ns, name), groups, uid, {})

    def _track_use(self, secret: Obj) -> None:
        """Label the Secret with today's date (UTC) unless it says today or tomorrow (clock skew)."""
        if self._mark_used is None:
            return
        md = secret.get("metadata") or {}
        now = self._now()
        today = time.strftime("%Y-%m-%d", time.gmtime(now))
        tomorrow = time.strftime("%Y-%m-%d", time.gmtime(now + 86_400))
        if (md.get("labels") or {}).get(LAST_USED_LABEL) not in (today, tomorrow):
            self._mark_used(md.get("namespace", ""), md.get("name", ""), md.get("uid", ""), today)

    def _user(self, claims: dict[str, Any]) -> UserInfo:
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            raise InvalidToken("service account token claims missing the kubernetes.io claim")
        ns = private.get("namespace")
        sa_ref = private.get("serviceaccount") or {}
        if not isinstance(ns, str) or not isinstance(sa_ref, dict) or not sa_ref.get("name"):
            raise InvalidToken("service account token claims are malformed")
        name = str(sa_ref["name"])
        sa = self._lookup("", "serviceaccounts", ns, name)
        if sa is None:
            raise InvalidToken(f'serviceaccounts "{name}" not found')
        sa_uid = (sa.get("metadata") or {}).get("uid", "")
        if sa_uid != sa_ref.get("uid"):
            raise InvalidToken(f"service account UID ({sa_uid}) does not match claim ({sa_ref.get('uid')})")
        extra: dict[str, list[str]] = {}
        for kind, plural in (("pod", "pods"), ("secret", "secrets")):
            ref = private.get(kind)
            if not isinstance(ref, dict):
                continue
            obj = self._lookup("", plural, ns, str(ref.get("name") or ""))
            if obj is None:
                raise InvalidToken(f'{plural} "{ref.get("name")}" not found')
            md = obj.get("metadata") or {}
            if md.get("uid") != ref.get("uid"):
                raise InvalidToken(f"{kind} UID ({md.get('uid')}) does not match claim ({ref.get('uid')})")
            if kind == "pod":
                extra[POD_NAME] = [str(ref.get("name"))]
                extra[POD_UID] = [str(ref.get("uid"))]
        node = private.get("node")
        if isinstance(node, dict) and node.get("name") and not isinstance(private.get("pod"), dict):
            # bound to the Node itself (not just naming a pod's node): the Node must still be there
            live = self._lookup("", "nodes", "", str(node["name"]))
            if live is None:
                raise InvalidToken(f'nodes "{node["name"]}" not found')
            live_uid = (live.get("metadata") or {}).get("uid")
            if live_uid != node.get("uid"):
                raise InvalidToken(f"node UID ({live_uid}) does not match claim ({node.get('uid')})")
        if isinstance(node, dict) and node.get("name"):
            extra[NODE_NAME] = [str(node["name"])]
            if node.get("uid"):
                extra[NODE_UID] = [str(node["uid"])]
        if claims.get("jti"):
            extra[CREDENTIAL_ID] = [f"JTI={claims['jti']}"]
        groups = (*rbac.service_account_groups(ns), "system:authenticated")
        return UserInfo(
            rbac.service_account_username(ns, name), groups, str(sa_uid), dict(sorted(extra.items()))
        )
