"""``gangplane`` command line: ``gangplane serve`` runs the whole control plane in one process."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from featuregates import FeatureGate, FeatureGateError
from featuregates.scopes import GATE_SCOPES
from gangplane import faults
from gangplane.blas import one_blas_thread
from gangplane.kubeconfig import write_kubeconfig
from gangplane.recordflags import add_record_flags, record_limits

# The control plane (API server, every component, uvicorn, the schemas) is imported when a
# command needs it, not with this module: ``main`` first turns the cyclic collector off for
# the start (see ``main``), and ``gangplane bench`` / ``snapshot`` / ``--help`` need none of it.
if TYPE_CHECKING:
    from apiserver.auth.serviceaccount import SigningKey
    from apiserver.client.leaderelection import LeaderElectionConfig
    from apiserver.storage.options import StorageOptions


def feature_gates_help(gates: FeatureGate | None = None) -> str:
    """kube's ``--feature-gates`` help: the syntax, then one ``Name=true|false (STAGE - default=…)`` per gate."""
    lines = [
        "A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:"
    ]
    for name, spec, _ in (gates or FeatureGate()).items():
        lines.append(f"{name}=true|false ({spec.display_stage} - default={str(spec.default).lower()})")
    return "\n".join(lines)


_SCOPE_HELP = {
    "apiserver": "the API server",
    "controller-manager": "every controller (kube-controller-manager)",
    "scheduler": "the scheduler",
    "kubelet": "the simulated kubelets (node agent)",
}


def _flag(prefix: str) -> str:
    return f"--{prefix}-feature-gates"


_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_bool(text: str) -> bool:
    """pflag's (Go ``strconv.ParseBool``) spellings, so ``--leader-elect=false`` works as in kube."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def _duration(text: str) -> float:
    from apiserver.client.leaderelection import parse_duration as parse_go_duration

    try:
        return parse_go_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _leader_election_flags(s: argparse.ArgumentParser) -> None:
    """component-base's ``--leader-elect*`` flags (kube's help text), shared by every elected component."""
    s.add_argument(
        "--leader-elect",
        nargs="?",
        const=True,
        default=True,
        type=parse_bool,
        metavar="true|false",
        help="Start a leader election client and gain leadership before executing the main loop. Enable "
        "this when running replicated components for high availability. (default true)\nThe controllers "
        "hold the Lease kube-system/kube-controller-manager, the scheduler kube-system/kube-scheduler, the "
        "node agent kube-system/gangplane-node-agent; a free Lease is taken at once, so a lone server starts "
        "as fast as without it.",
    )
    s.add_argument(
        "--leader-elect-lease-duration",
        type=_duration,
        default="15s",
        metavar="duration",
        help="The duration that non-leader candidates will wait after observing a leadership renewal until "
        "attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum "
        "duration that a leader can be stopped before it is replaced by another candidate. This is only "
        "applicable if leader election is enabled. (default 15s)",
    )
    s.add_argument(
        "--leader-elect-renew-deadline",
        type=_duration,
        default="10s",
        metavar="duration",
        help="The interval between attempts by the acting master to renew a leadership slot before it stops "
        "leading. This must be less than the lease duration. This is only applicable if leader election is "
        "enabled. (default 10s)",
    )
    s.add_argument(
        "--leader-elect-retry-period",
        type=_duration,
        default="2s",
        metavar="duration",
        help="The duration the clients should wait between attempting acquisition and renewal of a "
        "leadership. This is only applicable if leader election is enabled. (default 2s)",
    )


def leader_election_config(args: argparse.Namespace) -> LeaderElectionConfig | None:
    """The ``--leader-elect*`` flags as a config (None with ``--leader-elect=false``); raises on bad values."""
    from apiserver.client.leaderelection import LeaderElectionConfig, LeaderElectionError

    if not args.leader_elect:
        return None
    for flag, value in (
        ("--leader-elect-lease-duration", args.leader_elect_lease_duration),
        ("--leader-elect-renew-deadline", args.leader_elect_renew_deadline),
        ("--leader-elect-retry-period", args.leader_elect_retry_period),
    ):
        if value <= 0:
            raise LeaderElectionError(f"invalid {flag}: must be greater than zero")
    config = LeaderElectionConfig(
        lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
    )
    config.validate()
    return config


def _parser() -> argparse.ArgumentParser:
    from apiserver.storage.cache import DEFAULT_HISTORY_BYTES

    p = argparse.ArgumentParser(
        prog="gangplane", description="A mini Kubernetes control plane for KEP-6277 workloads."
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "serve",
        help="run the API server, controllers, scheduler and simulated nodes",
        formatter_class=argparse.RawTextHelpFormatter,
    )
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=6443, help="listen port; 0 picks a free one")
    s.add_argument(
        "--kubeconfig", default="./gangplane.kubeconfig", help="where to write a kubeconfig for this server"
    )
    s.add_argument(
        "--feature-gates",
        default="",
        metavar="mapStringBool",
        help=feature_gates_help() + "\nApplies to every component; the flags below override one component.",
    )
    for prefix in GATE_SCOPES:
        s.add_argument(
            _flag(prefix),
            default="",
            metavar="mapStringBool",
            dest=f"{prefix.replace('-', '_')}_feature_gates",
            help=f"feature gates of {_SCOPE_HELP[prefix]} only, over --feature-gates (same syntax and gates)",
        )
    s.add_argument("--cluster", default=None, help="fleet YAML replacing the embedded default cluster")
    s.add_argument(
        "--stages",
        default=None,
        metavar="FILE",
        help="node agent stages (YAML): what pods' containers do and when nodes fail, by selector; "
        "stages with status templates, events, finalizers, run beside the shipped lifecycle.yaml or, "
        "with replaceDefaults: true, instead of it (docs/cluster.md#stages-as-data)",
    )
    s.add_argument(
        "--import",
        dest="import_files",
        action="append",
        default=[],
        metavar="FILE",
        help="load a cluster dump (kubectl get ... -o yaml) once serving: its Namespaces, PriorityClasses, "
        "Nodes, bound and pending pods (as gangplane import does); pair with a --cluster of nodes: []",
    )
    s.add_argument(
        "--import-workloads",
        action="store_true",
        help="with --import: also load Deployments, ReplicaSets, StatefulSets, DaemonSets, CronJobs and "
        "Jobs, re-linking owner references (gangplane import --workloads)",
    )
    add_record_flags(
        s,
        "keep gangplane's scheduling records (why each pod and PodGroup landed where it did; "
        "kubectl get schedulingrecords, gangplane explain); --no-scheduling-records turns them off",
    )
    s.add_argument(
        "--scheduler-config",
        default=None,
        metavar="FILE",
        help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) for the scheduler, as kube-scheduler's "
        "--config: profiles, plugins, pluginConfig, percentageOfNodesToScore, backoff; served at /configz",
    )
    s.add_argument("--controllers", default="*", help="controllers to run, kube's '*,-name' syntax")
    s.add_argument(
        "--event-loop",
        default="asyncio",
        choices=("asyncio", "uvloop", "auto"),
        help="the process's event loop (gangplane's own flag): asyncio (default), uvloop (the uvloop "
        "extra: a few per cent less CPU, more memory per idle TLS connection) or auto (uvloop when "
        "installed). What clients see does not depend on it",
    )
    s.add_argument(
        "--components",
        default=",".join(COMPONENTS),
        metavar="LIST",
        help="which components this process runs, comma-separated: any of "
        + ", ".join(COMPONENTS)
        + " (default: all). apiserver is required here; run the others in their own processes with "
        "'gangplane scheduler|controller-manager|node-agent --kubeconfig FILE'",
    )
    _leader_election_flags(s)
    s.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    s.add_argument(
        "--service-cluster-ip-range", default="10.96.0.0/12", help="CIDR the Service ClusterIPs come from"
    )
    s.add_argument("--service-node-port-range", default="30000-32767", help="port range NodePorts come from")
    s.add_argument(
        "--anonymous",
        action="store_true",
        help="admit requests without a token (as system:anonymous); by default a bearer token, written into "
        "the kubeconfig, is required for everything but /healthz, /livez, /readyz and /version",
    )
    s.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin (scheme://host[:port]) whose pages may write to the API, e.g. a UI served "
        "elsewhere; repeatable. Without it a browser's cross-site write (Sec-Fetch-Site cross-site or "
        "same-site, or a foreign Origin) is refused with 403 in every mode (gangplane's guard; docs/auth.md)",
    )
    s.add_argument(
        "--authorization-mode",
        default="AlwaysAllow",
        choices=["AlwaysAllow", "RBAC"],
        help="how requests are authorized: AlwaysAllow (the default) allows every authenticated request; "
        "RBAC decides them from the stored Roles, ClusterRoles and their bindings, as kube-apiserver's "
        "--authorization-mode=RBAC does (the kubeconfig user is bound to cluster-admin)",
    )
    s.add_argument(
        "--event-ttl",
        default="1h0m0s",
        metavar="DURATION",
        help="how long an Event lives after its last write, as kube-apiserver's flag (default 1h0m0s; 0 keeps "
        "Events for ever)",
    )
    s.add_argument(
        "--service-account-signing-key-file",
        default="",
        metavar="FILE",
        help="PEM RSA private key that signs and checks service-account tokens, as kube-apiserver's flag "
        "of that name (default: DIR/sa.key with --data-dir, made on the first start, so tokens outlive a "
        "restart; otherwise a key made for the process)",
    )
    s.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="serve HTTPS with a CA and certificate generated at start, the CA written into the kubeconfig "
        "(default); --no-tls serves plain HTTP, over which kubectl sends no credentials, so pair it with --anonymous",
    )
    s.add_argument(
        "--ui",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="serve gangplane's live view at /ui/ and print a one-time login URL for it (default); the view "
        "uses the API with the kubeconfig user's rights, through an HttpOnly SameSite=Strict session cookie "
        "(docs/ui.md); --no-ui serves no /ui/ paths",
    )
    s.add_argument(
        "--watch-history",
        default="5m",
        metavar="DURATION",
        help="how far back a watch can resume from a resourceVersion (kube's etcd compaction interval); "
        "older resourceVersions get 410 Expired and the client re-lists (default 5m)",
    )
    s.add_argument(
        "--watch-history-bytes",
        type=int,
        default=DEFAULT_HISTORY_BYTES,
        metavar="BYTES",
        help="bytes of serialized objects the watch history may hold across resources; the oldest events "
        f"are compacted beyond it (default {DEFAULT_HISTORY_BYTES})",
    )
    s.add_argument(
        "--data-dir",
        default="",
        metavar="DIR",
        help="keep the cluster in DIR (an embedded SQLite database, created if missing) so that it "
        "survives restarts; every acknowledged write is on disk. Default: in memory only",
    )
    s.add_argument(
        "--etcd-servers",
        default="",
        metavar="URLS",
        help="keep the cluster in etcd: comma-separated http://host:port members of one etcd cluster "
        "(etcd v3); several gangplane servers given the same etcd serve the same cluster",
    )
    s.add_argument(
        "--etcd-prefix",
        default="/registry",
        help="the prefix of every key gangplane stores in etcd (default /registry, as kube-apiserver)",
    )
    s.add_argument(
        "--etcd-compaction-interval",
        default="5m",
        metavar="DURATION",
        help="how often an API server compacts etcd's history, to the revision of one interval earlier "
        "(kube-apiserver's default 5m); 0 disables",
    )
    s.add_argument(
        "--webhook-service",
        action="append",
        default=[],
        metavar="NAMESPACE/NAME[:PORT]=HOST:PORT",
        help="gangplane's own: where an admission or conversion webhook behind a Service listens "
        "(gangplane runs no pods), e.g. webhooks/my-operator=127.0.0.1:9443; repeatable. A Service can "
        "also say it with the webhook.gangplane.io/address annotation",
    )
    _component_parsers(sub)
    snap = sub.add_parser(
        "snapshot",
        help="save a data dir's cluster state to a file, restore it into a new data dir (as etcdctl snapshot)",
    )
    snap_sub = snap.add_subparsers(dest="snapshot_command", required=True)
    for name, helptext in (
        ("save", "copy the --data-dir's database into FILE (consistent, also while a server runs on it)"),
        ("restore", "create the new (or empty) --data-dir from snapshot FILE"),
        ("status", "show a snapshot's revision, objects, stored revisions and size"),
    ):
        c = snap_sub.add_parser(name, help=helptext)
        c.add_argument("file", metavar="FILE")
        if name != "status":
            c.add_argument("--data-dir", required=True, metavar="DIR", help="the data dir of gangplane serve")
    faults.add_parser(sub)
    e = sub.add_parser("explain", help="why a pod or PodGroup landed where it did (its scheduling record)")
    e.add_argument("target", metavar="pod/NAME|podgroup/NAME")
    e.add_argument("-n", "--namespace", default="", help="namespace (default: the kubeconfig context's)")
    e.add_argument(
        "--kubeconfig", default="", help="kubeconfig (default: $KUBECONFIG, else ./gangplane.kubeconfig)"
    )
    e.add_argument("-o", "--output", default="table", choices=["table", "yaml", "json"])
    im = sub.add_parser(
        "import",
        help="load a cluster's Nodes, PriorityClasses, namespaces, bound and pending pods (a kubectl dump or a live "
        "cluster, read-only) into a gangplane server",
    )
    im.add_argument("files", nargs="*", metavar="FILE", help="kubectl get ... -o yaml output (any number)")
    im.add_argument(
        "--from-kubeconfig", default="", metavar="PATH", help="read a live cluster instead (GET only)"
    )
    im.add_argument(
        "--kubeconfig",
        default="",
        help="the gangplane server to import into (default: $KUBECONFIG, else ./gangplane.kubeconfig)",
    )
    im.add_argument("--dry-run", action="store_true", help="print the report without creating anything")
    im.add_argument(
        "--workloads",
        action="store_true",
        help="also import Deployments, ReplicaSets, StatefulSets, DaemonSets, CronJobs and Jobs, "
        "re-linking owner references",
    )
    sub.add_parser(
        "bench",
        help="run benchmark scenarios (gangplane bench --help), or compare two runs (gangplane bench compare A B)",
        add_help=False,
    )
    return p


#: what ``gangplane serve --components`` may name, in start order
APISERVER_COMPONENT = "apiserver"
CONTROLLER_MANAGER_COMPONENT = "controller-manager"
SCHEDULER_COMPONENT = "scheduler"
NODE_AGENT_COMPONENT = "node-agent"
COMPONENTS = (APISERVER_COMPONENT, CONTROLLER_MANAGER_COMPONENT, SCHEDULER_COMPONENT, NODE_AGENT_COMPONENT)

_STANDALONE_HELP = {
    CONTROLLER_MANAGER_COMPONENT: "run the controllers (kube-controller-manager) against an API server",
    SCHEDULER_COMPONENT: "run the workload-aware scheduler (kube-scheduler) against an API server",
    NODE_AGENT_COMPONENT: "run the simulated nodes (the kubelets of the fleet) against an API server",
}


def parse_components(text: str) -> list[str]:
    """``--components``: a comma-separated subset of :data:`COMPONENTS`; raises ValueError naming a bad one."""
    out: list[str] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        if item not in COMPONENTS:
            raise ValueError(
                f'invalid --components: unknown component "{item}" (known: {", ".join(COMPONENTS)})'
            )
        if item not in out:
            out.append(item)
    if not out:
        raise ValueError("invalid --components: name at least one of " + ", ".join(COMPONENTS))
    return out


def _component_parsers(sub: Any) -> None:
    """``gangplane scheduler|controller-manager|node-agent --kubeconfig FILE``: one component per process."""
    for name, helptext in _STANDALONE_HELP.items():
        c = sub.add_parser(name, help=helptext, formatter_class=argparse.RawTextHelpFormatter)
        c.add_argument(
            "--kubeconfig",
            required=True,
            metavar="FILE",
            help="kubeconfig of the API server to run against (gangplane serve's, or any cluster's)",
        )
        c.add_argument(
            "--context", default="", help="the kubeconfig context to use (default: its current-context)"
        )
        c.add_argument(
            "--feature-gates",
            default="",
            metavar="mapStringBool",
            help=feature_gates_help() + "\nThis process's own gates (kube gives every binary its own).",
        )
        if name == CONTROLLER_MANAGER_COMPONENT:
            c.add_argument("--controllers", default="*", help="controllers to run, kube's '*,-name' syntax")
            c.add_argument(
                "--service-account-private-key-file",
                default="",
                metavar="FILE",
                help="PEM RSA key the serviceaccount-token controller signs tokens with (the API server's "
                "--service-account-signing-key-file); without it that controller does not run, as in kube",
            )
            c.add_argument(
                "--root-ca-file",
                default="",
                metavar="FILE",
                help="CA bundle published as ca.crt in service-account token Secrets (default: the kubeconfig's CA)",
            )
        if name == NODE_AGENT_COMPONENT:
            c.add_argument(
                "--cluster", default=None, help="fleet YAML replacing the embedded default cluster"
            )
        if name == SCHEDULER_COMPONENT:
            c.add_argument(
                "--scheduler-config",
                default=None,
                metavar="FILE",
                help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), as kube-scheduler's --config "
                "(the same file gangplane serve --scheduler-config reads)",
            )
            add_record_flags(
                c,
                "keep gangplane's scheduling records when the API server serves "
                "scheduling.gangplane.dev/v1alpha1 (a gangplane server does; another cluster does not)",
            )
        _leader_election_flags(c)
        c.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])


def component_gates(args: argparse.Namespace, gates: FeatureGate) -> dict[str, dict[str, bool]]:
    """The per-component ``--<prefix>-feature-gates`` values, keyed by gate view; raises on bad input.

    Each value is checked against the registry the way ``--feature-gates`` is (unknown gate, bad
    value, locked gate), combined with the global gates, so an error names the flag it came from.
    """
    out: dict[str, dict[str, bool]] = {}
    for prefix, key in GATE_SCOPES.items():
        value = getattr(args, f"{prefix.replace('-', '_')}_feature_gates", "")
        if not value:
            continue
        try:
            parsed = FeatureGate.from_string(value, gates.known()).overrides()
        except FeatureGateError as e:
            raise FeatureGateError(f"invalid {_flag(prefix)}: {e}") from None
        out[key] = parsed
    return out


def parse_webhook_services(values: list[str]) -> dict[str, str]:
    """``--webhook-service NAMESPACE/NAME[:PORT]=HOST:PORT`` values as the control plane's mapping."""
    out: dict[str, str] = {}
    for value in values:
        service, sep, address = value.partition("=")
        ns, slash, name = service.partition("/")
        host, colon, port = address.rpartition(":")
        if not sep or not slash or not ns or not name or not colon or not host or not port.isdigit():
            raise ValueError(f"{value!r} is not NAMESPACE/NAME[:PORT]=HOST:PORT")
        out[service] = address
    return out


def storage_options(args: argparse.Namespace) -> StorageOptions:
    """The storage flags as options; raises ValueError naming the flag on bad input."""
    from apiserver.storage.options import StorageOptions, parse_duration

    try:
        window = parse_duration(args.watch_history)
    except ValueError as e:
        raise ValueError(f"invalid --watch-history: {e}") from None
    if args.watch_history_bytes <= 0:
        raise ValueError(f"invalid --watch-history-bytes: {args.watch_history_bytes}: must be positive")
    etcd_servers = [u.strip() for u in args.etcd_servers.split(",") if u.strip()]
    if etcd_servers and args.data_dir:
        raise ValueError("--etcd-servers and --data-dir both name where the cluster lives: give one")
    if not args.etcd_prefix.startswith("/") or args.etcd_prefix.rstrip("/") == "":
        raise ValueError(
            f"invalid --etcd-prefix {args.etcd_prefix!r}: want an absolute key prefix like /registry"
        )
    try:
        compaction = (
            0.0
            if args.etcd_compaction_interval.strip() in ("0", "0s")
            else parse_duration(args.etcd_compaction_interval)
        )
    except ValueError as e:
        raise ValueError(f"invalid --etcd-compaction-interval: {e}") from None
    return StorageOptions(
        data_dir=args.data_dir,
        watch_history=window,
        watch_history_bytes=args.watch_history_bytes,
        etcd_servers=etcd_servers,
        etcd_prefix=args.etcd_prefix,
        etcd_compaction_interval=compaction,
    )


def service_account_key(args: argparse.Namespace) -> SigningKey | None:
    """The key of ``--service-account-signing-key-file``, or the data dir's (made on the first
    start); checked now, so a bad file stops the start. None: a key for this process only."""
    from apiserver.auth.serviceaccount import SigningKey

    if args.service_account_signing_key_file:
        key = SigningKey(args.service_account_signing_key_file)
    elif args.data_dir:
        from apiserver.storage.sqlite import SA_KEY_NAME

        key = SigningKey(Path(args.data_dir) / SA_KEY_NAME, create=True)  # the dir is locked by now
    else:
        return None
    key.check()
    return key


def _component_of(name: str) -> str:
    """Which ``--components`` entry registered component ``name`` belongs to."""
    from controllers.manager import NODE_AGENT
    from scheduler.component import COMPONENT_NAME as SCHEDULER

    if name == SCHEDULER:
        return SCHEDULER_COMPONENT
    if name == NODE_AGENT:
        return NODE_AGENT_COMPONENT
    return CONTROLLER_MANAGER_COMPONENT


async def _serve(
    args: argparse.Namespace,
    gates: FeatureGate,
    per_component: dict[str, dict[str, bool]],
    leader_election: LeaderElectionConfig | None,
    components: list[str],
) -> int:
    from apiserver.registry.builtin import StrategyModuleError
    from apiserver.server.crossorigin import CrossOriginGuard
    from apiserver.storage.options import open_storage, parse_duration
    from controllers.fleet import load_fleet
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components, tune_gc

    try:
        event_ttl = 0.0 if args.event_ttl.strip() in ("0", "0s") else parse_duration(args.event_ttl)
    except ValueError as e:
        print(f"gangplane: invalid --event-ttl: {e}", file=sys.stderr)
        return 2
    scheduler_config = None
    if args.scheduler_config:
        from scheduler.config import ConfigError, load_scheduler_config

        try:
            scheduler_config = load_scheduler_config(args.scheduler_config)
        except ConfigError as e:
            print(f"gangplane: invalid --scheduler-config {args.scheduler_config}: {e}", file=sys.stderr)
            return 2
    try:
        guard = CrossOriginGuard(args.allow_origin)
    except ValueError as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 2
    try:
        storage = open_storage(storage_options(args))
    except (ValueError, ConnectionError) as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 2
    try:
        sa_key = service_account_key(args)
    except ValueError as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 2
    try:
        webhook_services = parse_webhook_services(args.webhook_service)
    except ValueError as e:
        print(f"gangplane: invalid --webhook-service: {e}", file=sys.stderr)
        return 2
    try:
        cp = ControlPlane(
            ControlPlaneOptions(
                gates=gates,
                component_gates=per_component,
                service_cluster_ip_range=args.service_cluster_ip_range,
                service_node_port_range=args.service_node_port_range,
                authorization_mode=args.authorization_mode,
                storage=storage,
                leader_election=leader_election,
                service_account_key=sa_key,
                event_ttl=event_ttl,
                webhook_service_addresses=webhook_services,
                scheduler_config=scheduler_config,
                # only for a scheduler this process runs (its /configz section says what it keeps)
                scheduling_records=record_limits(args) if SCHEDULER_COMPONENT in components else False,
            )
        )
    except StrategyModuleError as e:
        print(f"gangplane: cannot build the API server: {e}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 2
    cluster = None
    if args.cluster:
        try:
            cluster = load_fleet(Path(args.cluster))
        except (OSError, ValueError) as e:
            print(f"gangplane: invalid --cluster file {args.cluster}: {e}", file=sys.stderr)
            return 2
    if args.stages:
        from gangplane.stagefile import with_stage_file

        try:
            cluster = with_stage_file(cluster, Path(args.stages))
        except (OSError, ValueError) as e:
            print(f"gangplane: invalid --stages file {args.stages}: {e}", file=sys.stderr)
            return 2
    try:
        names = default_components(cp, cluster, args.controllers)
    except ValueError as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 2
    names = [n for n in names if _component_of(n) in components]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    from apiserver.server.frontdoor import ADMIN, FrontDoorPolicy, new_token, static_tokens

    kubeconfig = Path(args.kubeconfig).resolve()
    token = new_token()
    policy = FrontDoorPolicy([static_tokens({token: ADMIN})], anonymous=args.anonymous, cross_origin=guard)
    tls = None
    if not args.tls and not args.anonymous:
        print(
            "gangplane: warning: --no-tls without --anonymous: kubectl sends no token over plain HTTP "
            "and will be refused; only clients that send the token anyway (e.g. the Python client) get in",
            file=sys.stderr,
        )
    if args.tls:
        from apiserver.server.tlsgen import serving_files

        tls = serving_files(kubeconfig.parent / f"{kubeconfig.name}.pki", args.host)
    ui = None
    if args.ui:
        from gangplane.ui import UI

        ui = UI()
    try:
        url = await cp.serve_http(args.host, args.port, front_door=policy, tls=tls, ui=ui)
    except OSError as e:
        print(f"gangplane: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        await storage.close()  # commits the bootstrap writes and releases the data dir
        return 1
    await cp.start(names)
    tune_gc()
    write_kubeconfig(kubeconfig, url, token, tls.ca_pem() if tls is not None else b"")
    if args.import_files:
        await _import_at_start(args.import_files, kubeconfig, args.import_workloads)
    print(f"gangplane: serving on {url} (export KUBECONFIG={kubeconfig})", flush=True)
    if ui is not None:
        print(f"gangplane: live view (one-time login link): {ui.login_url(url)}", flush=True)
    await stop.wait()
    print("gangplane: shutting down", flush=True)
    cp.app.shutting_down = True
    await cp.stop()
    return 0


async def _import_at_start(files: list[str], kubeconfig: Path, workloads: bool = False) -> None:
    """``serve --import DUMP [--import-workloads]``: load a cluster dump before announcing the server
    (see ``gangplane import``)."""
    from gangplane.importer import apply_plan, plan_import, read_dumps, render_report

    def run() -> str:
        plan = plan_import(read_dumps(files), workloads=workloads)
        return render_report(", ".join(files), plan, apply_plan(plan, str(kubeconfig)))

    try:
        print(await asyncio.to_thread(run), end="", flush=True)
    except Exception as e:  # the server still serves what it has
        print(f"gangplane: --import failed: {e}", file=sys.stderr, flush=True)


def snapshot_main(args: argparse.Namespace) -> int:
    """``gangplane snapshot save|restore|status``: etcdctl's messages; exit 2 on a bad file or dir."""
    from apiserver.storage import snapshot
    from apiserver.storage.sqlite import DataDirError

    try:
        if args.snapshot_command == "save":
            info = snapshot.save(args.data_dir, args.file)
            print(f"Snapshot saved at {args.file} (revision {info.revision}, {info.objects} objects)")
        elif args.snapshot_command == "restore":
            info = snapshot.restore(args.file, args.data_dir)
            print(
                f"Snapshot {args.file} restored into {args.data_dir} "
                f"(revision {info.revision}, {info.objects} objects)"
            )
        else:
            info = snapshot.status(args.file)
            print(f"{'REVISION':<20} {'COMPACTED':<20} {'OBJECTS':<10} {'REVISIONS':<10} SIZE")
            print(
                f"{info.revision:<20} {info.compacted_revision:<20} {info.objects:<10} "
                f"{info.revisions:<10} {info.size}"
            )
    except DataDirError as e:
        print(f"gangplane: {e}", file=sys.stderr)
        return 2
    return 0


#: what the ``[bench]`` extra installs for ``gangplane bench`` (the base install has neither)
BENCH_MODULES = ("rich", "matplotlib")


def missing_modules(names: tuple[str, ...]) -> list[str]:
    """The modules of ``names`` that cannot be imported (an extra that is not installed)."""
    import importlib.util

    return [n for n in names if importlib.util.find_spec(n) is None]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # before anything imports numpy (the scheduler does, lazily): see gangplane.blas
    one_blas_thread()
    if argv and argv[0] == "bench":
        missing = missing_modules(BENCH_MODULES)
        if missing:
            print(
                f"gangplane: gangplane bench needs the bench extra (missing {', '.join(missing)}): "
                "pip install 'gangplane[bench]'",
                file=sys.stderr,
            )
            return 2
        from bench.cli import main as bench_main

        return bench_main(argv[1:])
    # A start allocates about a million objects (modules, schemas, the registry, the fleet)
    # and frees almost none of them, so every collection the cyclic GC runs meanwhile
    # traverses the growing heap for nothing: 60-90 ms of a cold start. It stays off until
    # the server is up, where ``tune_gc`` freezes what the start made and turns it back on;
    # a command that returns (an error, ``snapshot``, ``--help``) restores it here.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(argv)
    finally:
        if enabled:
            gc.enable()


def _main(argv: list[str]) -> int:
    from apiserver.client.leaderelection import LeaderElectionError

    args = _parser().parse_args(argv)
    if args.command == "snapshot":
        return snapshot_main(args)
    if args.command == "cluster":
        return faults.run(args)
    if args.command == "import":
        from gangplane.importer import main as import_main

        return import_main(args)
    if args.command == "explain":
        from gangplane.explain import main as explain_main

        return explain_main(args)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        gates = FeatureGate.from_string(args.feature_gates)
    except FeatureGateError as e:
        print(f"gangplane: invalid --feature-gates: {e}", file=sys.stderr)
        return 2
    if args.command == "serve":
        try:
            per_component = component_gates(args, gates)
        except FeatureGateError as e:
            print(f"gangplane: {e}", file=sys.stderr)
            return 2
        try:
            leader_election = leader_election_config(args)
        except LeaderElectionError as e:
            print(f"gangplane: invalid leader election configuration: {e}", file=sys.stderr)
            return 2
        try:
            components = parse_components(args.components)
        except ValueError as e:
            print(f"gangplane: {e}", file=sys.stderr)
            return 2
        if APISERVER_COMPONENT not in components:
            print(
                "gangplane: invalid --components: gangplane serve always runs the apiserver; run other "
                "components alone with 'gangplane scheduler|controller-manager|node-agent --kubeconfig FILE'",
                file=sys.stderr,
            )
            return 2
        from gangplane import eventloop

        try:
            loop = eventloop.resolve(args.event_loop)
        except eventloop.EventLoopUnavailable as e:
            print(f"gangplane: {e}", file=sys.stderr)
            return 2
        logging.getLogger("gangplane").info("event loop: %s", loop)
        return eventloop.run(_serve(args, gates, per_component, leader_election, components), loop)
    if args.command in _STANDALONE_HELP:
        try:
            leader_election = leader_election_config(args)
        except LeaderElectionError as e:
            print(f"gangplane: invalid leader election configuration: {e}", file=sys.stderr)
            return 2
        return asyncio.run(_run_standalone(args, gates, leader_election))
    return 2


async def _run_standalone(
    args: argparse.Namespace, gates: FeatureGate, leader_election: LeaderElectionConfig | None
) -> int:
    """One component process (``gangplane scheduler|controller-manager|node-agent``) until a signal."""
    from apiserver.auth.serviceaccount import SigningKey
    from apiserver.client.http import APIConnectionError
    from apiserver.client.leaderelection import (
        KUBE_CONTROLLER_MANAGER_LEASE,
        KUBE_SCHEDULER_LEASE,
        NODE_AGENT_LEASE,
    )
    from apiserver.client.restconfig import KubeconfigError, load_kubeconfig
    from apiserver.errors import StatusError
    from controllers.fleet import load_fleet
    from controllers.manager import NODE_AGENT, SERVICEACCOUNT_TOKEN, register_controllers
    from gangplane.standalone import StandaloneComponents, StandaloneOptions
    from scheduler.component import register_scheduler
    from scheduler.records.api import SCHEDULINGRECORDS

    if args.log_level != "debug":  # httpx logs every request at INFO
        logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        config = load_kubeconfig(args.kubeconfig, args.context)
    except KubeconfigError as e:
        print(f"gangplane: invalid --kubeconfig: {e}", file=sys.stderr)
        return 2
    options = StandaloneOptions(config=config, gates=gates, leader_election=leader_election)
    cluster = None
    scheduler_config = None
    if args.command == SCHEDULER_COMPONENT and args.scheduler_config:
        from scheduler.config import ConfigError, load_scheduler_config

        try:
            scheduler_config = load_scheduler_config(args.scheduler_config)
        except ConfigError as e:
            print(f"gangplane: invalid --scheduler-config {args.scheduler_config}: {e}", file=sys.stderr)
            return 2
    if args.command == CONTROLLER_MANAGER_COMPONENT:
        try:
            if args.service_account_private_key_file:
                options.signer = SigningKey(args.service_account_private_key_file)
                options.signer.check()
            if args.root_ca_file:
                options.root_ca = Path(args.root_ca_file).read_bytes()
        except (OSError, ValueError) as e:
            print(f"gangplane: {e}", file=sys.stderr)
            return 2
    if args.command == NODE_AGENT_COMPONENT and args.cluster:
        try:
            cluster = load_fleet(Path(args.cluster))
        except (OSError, ValueError) as e:
            print(f"gangplane: invalid --cluster file {args.cluster}: {e}", file=sys.stderr)
            return 2
    process = StandaloneComponents(options)
    try:
        await process.discover()
    except (APIConnectionError, StatusError) as e:
        await process.transport.aclose()
        print(f"gangplane: cannot reach the API server {config.server}: {e}", file=sys.stderr)
        return 1
    if args.command == SCHEDULER_COMPONENT:
        # records are objects of gangplane's own API group: kept only where the server serves it
        served = {r.gvr for r in process.served(dedupe_storage=False)}
        records = args.scheduling_records and SCHEDULINGRECORDS in served
        if args.scheduling_records and not records:
            logging.getLogger("gangplane").info(
                "scheduling records off: the API server does not serve %s", SCHEDULINGRECORDS
            )
        names = register_scheduler(process, scheduler_config, record_limits(args) if records else False)
        lease = KUBE_SCHEDULER_LEASE
    else:
        flag = args.controllers if args.command == CONTROLLER_MANAGER_COMPONENT else "*"
        try:
            selected = register_controllers(process, flag, cluster)
        except ValueError as e:
            await process.transport.aclose()
            print(f"gangplane: {e}", file=sys.stderr)
            return 2
        if args.command == NODE_AGENT_COMPONENT:
            names, lease = [NODE_AGENT], NODE_AGENT_LEASE
        else:
            names, lease = [n for n in selected if n != NODE_AGENT], KUBE_CONTROLLER_MANAGER_LEASE
            if options.signer is None and SERVICEACCOUNT_TOKEN in names:
                # kube-controller-manager: "no --service-account-private-key-file was given" disables it
                logging.getLogger("gangplane").warning(
                    "%s not started: no --service-account-private-key-file", SERVICEACCOUNT_TOKEN
                )
                names.remove(SERVICEACCOUNT_TOKEN)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await process.start(names, lease)
    print(f"gangplane: {args.command} running against {config.server}", flush=True)
    await stop.wait()
    print(f"gangplane: {args.command} shutting down", flush=True)
    await process.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
