"""kube-scheduler's configuration file: ``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``).

What ``kube-scheduler --config FILE`` does, in the same steps and with the same messages:

* :mod:`.decode` reads the YAML/JSON strictly (an unknown field is an error naming it);
* :mod:`.defaults` applies the v1 defaults: one ``default-scheduler`` profile when none is
  given, the default plugins merged with the profile's ``enabled``/``disabled`` (``*`` included),
  the plugins' default args, ``percentageOfNodesToScore``, backoff, leader election;
* :mod:`.validation` runs ``ValidateKubeSchedulerConfiguration`` and the plugin-args validators;
* :mod:`.profiles` instantiates each profile the way the framework runtime does (per-extension-point
  lists, MultiPoint expansion, Score weights) and turns it into gangplane's
  :class:`~scheduler.interfaces.Profile`; an unknown plugin fails here, in kube's words.

:func:`load_scheduler_config` runs all of it and returns a :class:`SchedulerConfig`: the
profiles to run, the queue's backoff, and the effective configuration ``/configz`` serves.
"""

from scheduler.config.load import ConfigError, SchedulerConfig, load_scheduler_config, scheduler_config_from

__all__ = ["ConfigError", "SchedulerConfig", "load_scheduler_config", "scheduler_config_from"]
