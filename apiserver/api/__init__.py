"""API types and pure helpers: what both the API server and the components may import.

Nothing here does I/O or knows the registry, the store or a client: the modules are plain
functions over the dict shapes of Kubernetes objects (kube's ``k8s.io/api`` and the pure parts of
``k8s.io/component-helpers``), so the registry's strategies and the scheduler compute a pod's
requests with the same code without the scheduler depending on the API server's internals.
"""
