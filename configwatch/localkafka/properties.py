"""Generated configuration files for the local KRaft broker."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["log4j2_properties", "server_properties"]


def server_properties(port: int, controller_port: int, data_dir: Path, extra: Mapping[str, str] | None = None) -> str:
    """server.properties for one combined broker+controller node on loopback; ``extra`` adds or overrides."""
    lines = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": "3",
        "auto.create.topics.enable": "true",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "log.retention.hours": "168",
        "log.segment.bytes": str(64 * 1024 * 1024),
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
        "num.network.threads": "2",
        "num.io.threads": "4",
        **(extra or {}),
    }
    return "".join(f"{k}={v}\n" for k, v in lines.items())


def log4j2_properties() -> str:
    """Broker logging: INFO to stdout (redirected to broker.log), chatty packages at WARN."""
    return "\n".join([
        "status = warn",
        "appender.out.type = Console",
        "appender.out.name = out",
        "appender.out.layout.type = PatternLayout",
        "appender.out.layout.pattern = [%d] %p %m (%c)%n",
        "rootLogger.level = info",
        "rootLogger.appenderRef.out.ref = out",
        "logger.kafka.name = kafka",
        "logger.kafka.level = info",
        "logger.state.name = state.change.logger",
        "logger.state.level = warn",
        "logger.request.name = kafka.request.logger",
        "logger.request.level = warn",
        "logger.cleaner.name = kafka.log.LogCleaner",
        "logger.cleaner.level = warn",
        "",
    ])
