"""gangplane's stand-in for kubelet's streaming server: what ``pods/log``, ``exec``, ``attach`` and
``portforward`` answer for containers that are only simulated.

kube-apiserver proxies these subresources to the kubelet of the pod's node. gangplane's node agent
has no network endpoint, so the API server answers them itself from the stored pod, through these
pure modules: :mod:`.shell` (a safe simulated shell, never a host process), :mod:`.logs` (the lines
a simulated container prints), :mod:`.container` (the filesystem and environment a process in it
sees). The WebSocket wiring is :mod:`apiserver.server.streams`.
"""
