"""The namespace controller: empties terminating namespaces and releases their ``kubernetes`` finalizer."""

from controllers.namespace.controller import NAME, NamespaceController
from controllers.namespace.deleter import NamespacedResourcesDeleter, ResourcesRemaining

__all__ = ["NAME", "NamespaceController", "NamespacedResourcesDeleter", "ResourcesRemaining"]
