"""Starting or joining Ray for one command, and leaving nothing behind.

`ray_cluster(address, stop)` connects the driver: `address` None starts a local Ray for this
command (stopped with it, even when `ray start` made one here); `"auto"` joins the cluster `ray
start` made on this machine; `HOST:PORT` that one, checked to answer first (Ray itself waits ~40 s,
deaf to signals, on an address nobody serves) and joined with this machine's Ray token when there
is one, as `auto` is. `ray.init` runs on the main thread (elsewhere it leaves a spinning thread) and
is not interrupted halfway (that leaves Ray's agents running): a stop request during it is honoured
as soon as it returns. Signal handlers are kept (Ray replaces SIGTERM's); what Ray prints on stdout
goes to stderr (stdout is the answer's). On exit the driver disconnects; a local Ray is shut down.
A local Ray listens on loopback alone (`LOOPBACK`): nothing of it is reachable from the network.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from logging import ERROR
from pathlib import Path
from types import ModuleType
from typing import Final

from agent_host._support.progress import progress
from agent_host._support.stopping import StopToken
from agent_host.errors import Interrupted, UsageError

INSTALL_HINT: Final = "install it with: pip install 'agent-host[ray]'"

AUTH_MODE: Final = "RAY_AUTH_MODE"
"""Ray's switch of token authentication ("token" or "disabled")."""

PROBE_TIMEOUT: Final = 3.0
"""Seconds to wait for a HOST:PORT address to accept a connection and answer."""

HTTP2_PREFACE: Final = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS: Final = 0x4
SETTINGS_FRAME: Final = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""An empty HTTP/2 SETTINGS frame: length 0, type SETTINGS, no flags, stream 0."""

LOOPBACK: Final = "127.0.0.1"
"""The address a local Ray's processes bind (its GCS, raylet and workers listen on the node's
address, and on every interface unless that address is loopback)."""

LOCAL_ONLY: Final = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch (read when Ray is imported, inherited by its processes) which, set to "0", makes
each of them take loopback as the node's address (`ray.init(_node_ip_address=...)` alone turns
127.0.0.1 back into the machine's address)."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Cluster:
    """The Ray the driver is connected to."""

    address: str
    """Its GCS address (HOST:PORT)."""
    cpus: float
    """CPUs it has in all (the executor's pool is sized by them)."""
    node_cpus: float
    """CPUs of its largest machine (an actor needing more could never be placed)."""
    local: bool
    """Started for this command (and shut down with it)."""


def import_ray() -> ModuleType:
    """The `ray` module; `UsageError` naming the extra to install when it is missing."""
    try:
        import ray
    except ImportError:
        raise UsageError("--executor ray needs Ray, which is not installed", hint=INSTALL_HINT) from None
    return ray


@contextmanager
def ray_cluster(address: str | None, stop: StopToken, *, verbose: bool = False) -> Iterator[Cluster]:
    """Connect to Ray (see the module docstring) for the body. Raises `UsageError` when `address`
    does not answer, `Interrupted` when a stop was requested before or while connecting."""
    stop.check("connecting to Ray")
    if address is not None and address != "auto":
        _probe(address)
        _use_token_if_any()  # before Ray is imported: it reads its settings once
    local = {} if address is not None else {"_node_ip_address": LOOPBACK}
    if address is None:
        os.environ[LOCAL_ONLY] = "0"  # before Ray is imported, as above
    ray = import_ray()
    what = "starting a local Ray" if address is None else f"joining the Ray cluster at {address}"
    with contextlib.redirect_stdout(sys.stderr):  # Ray prints its workers' deaths on stdout
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            with progress(what):
                try:
                    level = logging.INFO if verbose else ERROR
                    context = ray.init(
                        address=address if address is not None else "local",
                        namespace="agent-host",
                        include_dashboard=False,
                        log_to_driver=verbose,
                        logging_level=level,
                        **local,
                    )
                finally:
                    for sig, handler in handlers.items():
                        signal.signal(sig, handler)
                try:
                    stop.check("connecting to Ray")
                except Interrupted:
                    ray.shutdown()
                    raise
        except ConnectionError as exc:
            raise UsageError(f"--ray-address {address}: {exc}", hint="start one with `ray start --head`") from None
        try:
            cpus = float(ray.cluster_resources().get("CPU", 0))
            nodes = [float(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]
            cluster = Cluster(context.address_info.get("gcs_address") or "", cpus, max(nodes, default=0.0), not address)
            logger.info("Ray at %s: %g CPUs on %d machine(s)", cluster.address, cpus, len(nodes))
            yield cluster
        finally:
            ray.shutdown()


def _use_token_if_any() -> None:
    """Join with Ray's token when this machine has one, as `auto` does (Ray leaves token auth off
    for an explicit address unless `RAY_AUTH_MODE` says otherwise, and the cluster refuses it)."""
    if AUTH_MODE in os.environ:
        return
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if os.environ.get("RAY_AUTH_TOKEN") or Path(path or Path.home() / ".ray" / "auth_token").is_file():
        os.environ[AUTH_MODE] = "token"


def _probe(address: str) -> None:
    """Fail at once unless something at `address` (HOST:PORT) speaks HTTP/2 as Ray's GCS (gRPC)
    does: it answers the HTTP/2 preface with a SETTINGS frame. Ray itself would retry for minutes."""
    host, _, port = address.rpartition(":")
    hint = "start one with `ray start --head` and give the address it prints, or `auto` on that machine"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT) as connection:
            connection.sendall(HTTP2_PREFACE + SETTINGS_FRAME)
            answer = connection.recv(9)
    except OSError as exc:
        reason = f"no Ray cluster answers there ({exc.strerror or exc})"
        raise UsageError(f"--ray-address {address}: {reason}", hint=hint) from None
    if len(answer) < 4 or answer[3] != SETTINGS:
        reason = "something answers there, but not a Ray cluster (it does not speak gRPC)"
        raise UsageError(f"--ray-address {address}: {reason}", hint=hint)
