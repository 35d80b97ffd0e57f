"""Run the PushConfig gateway: the broker side of the draft KIP on the Kafka wire protocol.

It answers ApiVersions (v0-v5) and PushConfig (v0), hands each push to the
configured ClientConfigPolicy (by default KafkaTopicPolicy, which publishes
config_push events to the input topic, redacting sensitive values), publishes
connection_opened/closed events (KIP-511 registry), and serves Prometheus
metrics. It runs until SIGINT or SIGTERM, then flushes every event.

  configwatch gateway                          127.0.0.1:9192, metrics on :9193, embedded broker
  configwatch gateway --gateway-port 0         a free port (printed)
  configwatch gateway --client-config-policy-class-name none    no PushConfig (connections only)
"""

from __future__ import annotations

import argparse

from configwatch.contract import CONFIG_PUSH
from configwatch.errors import SetupError
from configwatch.localkafka import bootstrap_servers
from configwatch.settings import Settings
from policy.gateway import GatewayHandle, serve_gateway

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def run(settings: Settings, args: argparse.Namespace) -> int:
    with bootstrap_servers(settings) as bootstrap:

        def ready(handle: GatewayHandle) -> None:
            push = "PushConfig advertised" if handle.policy is not None else "PushConfig disabled"
            metrics = (f", metrics on http://{settings.gateway_host}:{handle.metrics_port}/metrics"
                       if handle.metrics_port is not None else "")
            print(f"gateway listening on {handle.bootstrap} ({push}){metrics}; publishing to "
                  f"{settings.input_topic} at {bootstrap}", flush=True)

        try:
            stats = serve_gateway(settings, bootstrap, on_ready=ready)
        except OSError as exc:
            raise SetupError(f"cannot listen on {settings.gateway_host}:{settings.gateway_port} "
                             f"(or its metrics port): {exc.strerror or exc}") from None
    print(f"gateway stopped: {stats.total('published')} events published "
          f"({stats.total('published', CONFIG_PUSH)} pushes), {stats.total('dropped')} dropped, "
          f"{stats.total('failed')} failed")
    return 0
