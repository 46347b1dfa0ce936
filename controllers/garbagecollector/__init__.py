"""The garbage collector: the ownerReference graph (``graph``), kept current from informers over every
served resource (``builder``), and the component acting on it through the API (``collector``)."""

from controllers.garbagecollector.collector import NAME, GarbageCollector
from controllers.garbagecollector.graph import Graph, Node, ObjectRef

__all__ = ["NAME", "GarbageCollector", "Graph", "Node", "ObjectRef"]
