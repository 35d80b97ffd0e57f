"""Drive a simulated fleet of Kafka clients that push their configurations (the KIP's client side).

Clients of several families (apache-kafka-java producer/consumer/admin/streams,
librdkafka, kafka-python, franz-go, sarama) at several versions connect,
perform ApiVersions, push realistic configurations (a share misconfigured or
leaking), hold their connection a while and disconnect.

  configwatch simulate                       start a gateway (free port) on the broker, run 200 clients
  configwatch simulate --connect             use the gateway at --gateway-host/--gateway-port instead
  configwatch simulate --direct              skip the network: hand pushes straight to the policy
  configwatch simulate --clients 1000 --rate 200 --seed 42
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import sys
from typing import TYPE_CHECKING

from cli.gateway_cmd import ensure_input_topic
from configwatch.errors import UsageError
from configwatch.localkafka import bootstrap_servers
from configwatch.reachability import check_listening
from configwatch.settings import Settings

if TYPE_CHECKING:
    from policy.simulator import FleetSpec

__all__ = ["add_arguments", "run"]


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a share between 0 and 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--clients", type=int, default=200, help="client instances to simulate (default 200)")
    parser.add_argument("--rate", type=float, default=0.0, help="clients started per second (default 0: unpaced)")
    parser.add_argument("--concurrency", type=int, default=100, help="clients active at once (default 100)")
    parser.add_argument("--seed", type=int, default=7, help="random seed; same seed, same fleet (default 7)")
    parser.add_argument("--misconfigured-share", type=_share, default=0.2, help="share misconfigured (0.2)")
    parser.add_argument("--leaking-share", type=_share, default=0.1, help="share leaking a secret (0.1)")
    parser.add_argument("--oversize-share", type=_share, default=0.01, help="share over client.config.max.bytes")
    parser.add_argument("--invalid-software-share", type=_share, default=0.01,
                        help="share reporting a software name the broker rejects (0.01)")
    parser.add_argument("--hold-ms", type=int, default=200, help="longest connection hold time, ms (default 200)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--connect", action="store_true", help="use the running gateway at --gateway-host:port")
    mode.add_argument("--direct", action="store_true", help="call the policy directly, no gateway or sockets")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.clients < 1 or args.concurrency < 1 or args.hold_ms < 0 or not 0 <= args.rate < math.inf:
        raise UsageError("--clients and --concurrency must be at least 1, --hold-ms and --rate not negative "
                         "(--rate: a finite number)")
    from policy.gateway.config import GatewayConfig  # the edge's imports, only when it runs
    from policy.simulator import FleetSpec, RunOptions, generate_fleet, run_gateway_and_simulator, run_over_tcp
    from policy.simulator.progress import Progress

    GatewayConfig.from_settings(settings)  # the gateway's knobs: a usage error before anything starts
    if settings.log_level != "DEBUG":
        # Compliant simulated clients warn about every sensitive key they withhold, as the KIP asks;
        # a fleet's worth of those lines would bury the summary.
        logging.getLogger("policy.client").setLevel(logging.ERROR)
    spec = FleetSpec(clients=args.clients, seed=args.seed, misconfigured_share=args.misconfigured_share,
                     leaking_share=args.leaking_share, oversize_share=args.oversize_share,
                     invalid_software_share=args.invalid_software_share, hold_ms_max=args.hold_ms)
    options = RunOptions(rate=args.rate, concurrency=args.concurrency)
    stream = None if args.no_progress else sys.stderr
    if args.connect:
        if not 0 < settings.gateway_port < 65536:
            raise UsageError(f"--connect needs the gateway's port, not {settings.gateway_port} (--gateway-port)")
        check_listening(settings.gateway_host, settings.gateway_port, settings.connect_timeout_s,
                        "PushConfig gateway (configwatch gateway; --gateway-host, --gateway-port)")
        fleet = generate_fleet(spec)
        bar = Progress(len(fleet), stream) if stream else None
        report = asyncio.run(run_over_tcp((settings.gateway_host, settings.gateway_port), fleet, options, bar))
        print("\n".join(report.lines()))
        return 0
    with bootstrap_servers(settings) as bootstrap:
        ensure_input_topic(settings, bootstrap)
        if args.direct:
            return _direct(settings, bootstrap, spec, stream)
        result = run_gateway_and_simulator(settings, bootstrap, spec=spec, options=options, progress=stream)
    print("\n".join(result.lines()))
    return 0


def _direct(settings: Settings, bootstrap: str, spec: FleetSpec, stream: object) -> int:
    from policy.loader import load_policy_class, policy_configs
    from policy.simulator import generate_fleet, run_direct
    from policy.simulator.progress import Progress

    cls = load_policy_class(settings.client_config_policy_class_name)
    if cls is None:
        raise UsageError("--direct needs a client config policy (client_config_policy_class_name is 'none')")
    fleet = generate_fleet(spec)
    policy = cls()
    policy.configure(policy_configs(settings, bootstrap))
    try:
        bar = Progress(len(fleet), sys.stderr) if stream else None
        report = run_direct(policy, fleet, broker_id=settings.gateway_broker_id, progress=bar)
    finally:
        policy.close()
    print("\n".join(report.lines()))
    return 0
