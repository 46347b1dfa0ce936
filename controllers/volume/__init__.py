"""Volume controllers: a minimal PersistentVolume binder/provisioner (``binder``)."""

from controllers.volume.binder import NAME, PVBinder

__all__ = ["NAME", "PVBinder"]
