"""Run the PushConfig gateway: the broker side of the draft KIP on the Kafka wire protocol.

It answers ApiVersions (v0-v5) and PushConfig (v0), hands each push to the
configured ClientConfigPolicy (by default KafkaTopicPolicy, which publishes
config_push events to the input topic, redacting sensitive values), publishes
connection_opened/closed events (KIP-511 registry), and serves Prometheus
metrics. It runs until SIGINT or SIGTERM, then flushes every event.

With --upstream it is a Kafka proxy in front of an existing cluster: real
clients bootstrap from the gateway, every request but PushConfig goes to the
broker it belongs to, broker addresses in Metadata, FindCoordinator,
DescribeCluster and Produce responses become gateway listeners (broker N on
--gateway-broker-port-base + N), and every client's KIP-511 name and version
shows up in the connection events and gauges. Plaintext only (no TLS/SASL
termination). See docs/ingest.md, "Proxy mode".

  configwatch gateway                          127.0.0.1:9192, metrics on :9193, embedded broker
  configwatch gateway --gateway-port 0         a free port (printed)
  configwatch gateway --client-config-policy-class-name none    no PushConfig (connections only)
  configwatch gateway --upstream kafka-0:9092,kafka-1:9092 --gateway-host 10.0.0.5
                                               proxy: clients use 10.0.0.5:9192, broker N is 10.0.0.5:9200+N
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from configwatch.contract import CONFIG_PUSH
from configwatch.errors import SetupError
from configwatch.localkafka import bootstrap_servers
from configwatch.settings import Settings

if TYPE_CHECKING:
    from policy.gateway import GatewayHandle

__all__ = ["add_arguments", "ensure_input_topic", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def ensure_input_topic(settings: Settings, bootstrap: str) -> None:
    """Create the input topic the gateway publishes to, unless it exists (broker defaults), as the job creates its
    output topics: left to the broker's auto-creation, the first publish logs an ERROR from the client."""
    from sinks.kafka import ensure_topic

    ensure_topic(bootstrap, settings.input_topic)


def run(settings: Settings, args: argparse.Namespace) -> int:
    from policy.gateway import serve_gateway  # the gateway's imports, only when it runs
    from policy.gateway.config import GatewayConfig

    GatewayConfig.from_settings(settings)  # a usage error before anything starts
    with bootstrap_servers(settings) as bootstrap:
        ensure_input_topic(settings, bootstrap)

        def ready(handle: GatewayHandle) -> None:
            push = "PushConfig advertised" if handle.policy is not None else "PushConfig disabled"
            metrics = (f", metrics on http://{settings.gateway_host}:{handle.metrics_port}/metrics"
                       if handle.metrics_port is not None else "")
            proxy = f"; proxying to {settings.upstream}" if settings.upstream else ""
            print(f"gateway listening on {handle.bootstrap} ({push}){metrics}; publishing to "
                  f"{settings.input_topic} at {bootstrap}{proxy}", flush=True)

        try:
            stats = serve_gateway(settings, bootstrap, on_ready=ready)
        except OSError as exc:
            raise SetupError(f"cannot listen on {settings.gateway_host}:{settings.gateway_port} "
                             f"(or its metrics port): {exc.strerror or exc}") from None
    print(f"gateway stopped: {stats.total('published')} events published "
          f"({stats.total('published', CONFIG_PUSH)} pushes), {stats.total('dropped')} dropped, "
          f"{stats.total('failed')} failed")
    return 0
