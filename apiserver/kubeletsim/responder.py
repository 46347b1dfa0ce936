"""What answers on a forwarded port of a simulated container.

Nothing listens inside a simulated container, so kubelet's port forwarding has no process to
connect to. Every forwarded connection, whatever the port or the image, reaches this generic
responder instead: it echoes the bytes it receives, in order, and closes when the client does.
It knows nothing about the pod, the image or the caller, so it behaves the same for every test.
"""

from __future__ import annotations


class EchoResponder:
    """One forwarded connection to ``port``: what the "container" sends back for what it got."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.received = 0

    def receive(self, data: bytes) -> bytes:
        """The answer to ``data``: the same bytes."""
        self.received += len(data)
        return data


__all__ = ["EchoResponder"]
