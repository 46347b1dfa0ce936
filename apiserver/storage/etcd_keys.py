"""Where kube-apiserver keeps each object in etcd, so that gangplane's keys read like a real cluster's.

kube-apiserver stores an object at ``<prefix>/<resource prefix>/<namespace>/<name>`` (cluster-scoped:
``<prefix>/<resource prefix>/<name>``) with ``--etcd-prefix`` defaulting to ``/registry``. The
resource prefix is the plural resource name, except:

* the prefixes compiled into Kubernetes (``SpecialDefaultResourcePrefixes``): nodes live under
  ``minions``, services under ``services/specs``, endpoints under ``services/endpoints``,
  replicationcontrollers under ``controllers``, ingresses under ``ingress``;
* the API servers built on ``EtcdOptions`` (apiextensions, kube-aggregator) and every custom resource
  store at ``<group>/<resource>``: ``/registry/apiextensions.k8s.io/customresourcedefinitions/<name>``,
  ``/registry/example.com/widgets/default/w1``. A group is laid out that way when it is one of those two
  or is a dotted group outside ``*.k8s.io`` (a CRD's group always has a dot).

Decoding goes the other way for events and lists read back from etcd. A plural resource name never
holds a dot, so a dotted first segment is a group; for the other keys the group is not in the key,
so it is read from the stored object's ``apiVersion`` (every stored value carries it, as kube's do).
"""

from __future__ import annotations

from apiserver.storage.interface import Key, StorageKey

#: kube's SpecialDefaultResourcePrefixes (the ones gangplane can serve)
SPECIAL_PREFIXES: dict[tuple[str, str], str] = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("extensions", "ingresses"): "ingress",
    ("networking.k8s.io", "ingresses"): "ingress",
}
#: the prefixes above back to plural resource names (the group comes from the value)
_PLURAL_OF = {prefix: plural for (_, plural), prefix in SPECIAL_PREFIXES.items()}
#: groups whose API servers store at ``<group>/<resource>`` whatever their name
GROUP_PREFIXED = frozenset({"apiextensions.k8s.io", "apiregistration.k8s.io"})


def group_prefixed(group: str) -> bool:
    """Whether ``group``'s resources live under ``<group>/<resource>`` (CRDs, apiextensions, aggregator)."""
    if group in GROUP_PREFIXED:
        return True
    return "." in group and not group.endswith(".k8s.io")


def resource_prefix(skey: StorageKey) -> str:
    """The resource's prefix below ``--etcd-prefix`` (kube's ``StorageFactory.ResourcePrefix``)."""
    group, plural = skey
    special = SPECIAL_PREFIXES.get((group, plural))
    if special is not None:
        return special
    if group_prefixed(group):
        return f"{group}/{plural}"
    return plural


def encode_key(prefix: str, skey: StorageKey, key: Key) -> bytes:
    """The etcd key of object ``key`` (namespace "" for cluster-scoped) of resource ``skey``."""
    namespace, name = key
    if namespace:
        return f"{prefix}{resource_prefix(skey)}/{namespace}/{name}".encode()
    return f"{prefix}{resource_prefix(skey)}/{name}".encode()


def group_of(api_version: str) -> str:
    """``apps`` of ``apps/v1``; the core group ``""`` of ``v1``."""
    return api_version.rpartition("/")[0]


def decode_key(prefix: str, etcd_key: bytes, api_version: str) -> tuple[StorageKey, Key] | None:
    """``(storage key, (namespace, name))`` of an etcd key below ``prefix``; None for a key of no
    resource (another layout, or a foreign tool's data under the same prefix).

    ``api_version`` is the stored object's, which names the group of a plain ``<plural>/…`` key.
    """
    text = etcd_key.decode("utf-8", "replace")
    if not text.startswith(prefix):
        return None
    parts = text[len(prefix) :].split("/")
    if len(parts) >= 3 and "/".join(parts[:2]) in _PLURAL_OF:
        plural, rest = _PLURAL_OF["/".join(parts[:2])], parts[2:]
        group = group_of(api_version)
    elif parts and parts[0] in _PLURAL_OF:
        plural, rest = _PLURAL_OF[parts[0]], parts[1:]
        group = group_of(api_version)
    elif len(parts) >= 3 and "." in parts[0]:
        group, plural, rest = parts[0], parts[1], parts[2:]
    else:
        group, plural, rest = group_of(api_version), parts[0], parts[1:]
    if not plural or not rest or len(rest) > 2 or not all(rest):
        return None
    if len(rest) == 2:
        return (group, plural), (rest[0], rest[1])
    return (group, plural), ("", rest[0])
