"""End to end on the real parts: a simulated fleet connects through the PushConfig gateway and
stays connected, the streaming job (Spark, continuous) turns the input topic into gauges and
alerts, and the dashboard's /metrics agrees with the gauges topic, with the fleet the simulator
connected, and with the alerts topic; when the fleet disconnects, the series disappear.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cli.dashboard_cmd import config_from
from cli.demo_live import ResidentFleet
from configwatch.settings import Settings
from policy.simulator import FleetSpec
from sinks.dashboard import DashboardService
from sinks.kafka import ensure_topic
from streaming.job import JobOptions, JobWaiter, StreamingJob
from tests.conftest import eventually
from tests.dashboard_helpers import current_gauges, get, metric_samples
from tests.kafka_helpers import read_all

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

CONN = "configwatch_client_connections"


def _connections(samples: dict) -> dict[str, float]:
    return {f"{dict(lb)['client_software_name']}/{dict(lb)['client_software_version']}": v
            for (name, lb), v in samples.items() if name == CONN}


def _expected(fleet: ResidentFleet) -> dict[str, float]:
    """Open connections per name/version as the contract counts them (no name/version below ApiVersions v3)."""
    keys = Counter(
        f"{c.identity.software_name}/{c.identity.software_version}" if c.identity.api_versions_version >= 3
        else "unknown/unknown" for c in fleet.clients)
    return {k: float(n) for k, n in keys.items()}


def test_simulated_fleet_through_the_job_to_the_dashboard(kafka_bootstrap: str, spark: Any, topic_name: Any,
                                                         tmp_path: Path) -> None:
    settings = Settings(
        bootstrap_servers=kafka_bootstrap, checkpoint_dir=tmp_path / "ckpt", input_topic=topic_name("in"),
        gauges_topic=topic_name("gauges"), alerts_topic=topic_name("alerts"),
        quarantine_topic=topic_name("quarantine"), source="kafka", sink="kafka", trigger="continuous",
        trigger_interval="1 second", outputs="gauges,alerts", dashboard_port=0)
    ensure_topic(kafka_bootstrap, settings.input_topic, partitions=2)
    # Every client stays connected: no refused handshakes or oversized pushes in this fleet.
    fleet = ResidentFleet(settings, kafka_bootstrap,
                          FleetSpec(clients=30, seed=5, oversize_share=0.0, invalid_software_share=0.0,
                                    leaking_share=0.25, misconfigured_share=0.3))
    expected = _expected(fleet)
    lines: list[str] = []
    dashboard = DashboardService(config_from(settings, kafka_bootstrap)).start()
    job = StreamingJob(settings, JobOptions.from_settings(settings), kafka_bootstrap, out=lines.append)
    waiter: JobWaiter | None = None

    def job_alive() -> None:
        if waiter is not None and waiter.failure is not None:
            raise AssertionError(f"the job failed: {waiter.failure}")

    try:
        job.start()
        waiter = job.wait_in_background()
        fleet.start()

        def metrics_match_topic_and_fleet() -> dict[str, float] | None:
            job_alive()
            got = _connections(metric_samples(get(dashboard.url + "metrics").text))
            topic = {k: float(g.connections) for k, g in current_gauges(kafka_bootstrap, settings.gauges_topic).items()}
            return got if got == topic == expected else None

        eventually(metrics_match_topic_and_fleet, timeout_s=240, interval_s=1.0,
                   message=f"/metrics == gauges topic == the connected fleet {expected} (job: {lines[-3:]})")
        samples = metric_samples(get(dashboard.url + "metrics").text)
        assert samples[("configwatch_fleet_connections", ())] == len(fleet.clients)
        assert not any(k.startswith("__") for k in current_gauges(kafka_bootstrap, settings.gauges_topic))
        assert get(dashboard.url + "api/gauges").json()["fleet"]["connections"] == len(fleet.clients)

        def alerts_match_topic() -> float | None:
            job_alive()
            ids = {k for k, v, _p, _o in read_all(kafka_bootstrap, settings.alerts_topic) if v is not None}
            counted = sum(v for (name, _lb), v in metric_samples(get(dashboard.url + "metrics").text).items()
                          if name == "configwatch_alerts_total")
            return counted if ids and counted == len(ids) else None

        eventually(alerts_match_topic, timeout_s=180, interval_s=1.0, message="alert counts == alerts topic")
        pushed = get(dashboard.url + "api/clients?limit=1000").json()["clients"]
        assert pushed, "the drill-down holds the fleet's pushes"
        detail = get(dashboard.url + f"api/clients/{pushed[0]['client_instance_id']}").json()
        assert detail["configs"] and all("value" not in c for c in detail["configs"] if c["sensitive"])

        # The fleet disconnects: every gauge is tombstoned and its series leaves /metrics.
        fleet.stop()

        def all_gone() -> bool:
            job_alive()
            samples = metric_samples(get(dashboard.url + "metrics").text)
            return (not _connections(samples) and samples[("configwatch_fleet_connections", ())] == 0
                    and not current_gauges(kafka_bootstrap, settings.gauges_topic))

        eventually(all_gone, timeout_s=240, interval_s=1.0, message="series gone after the fleet disconnected")
    finally:
        fleet.stop()
        if waiter is not None:
            waiter.stop()
        else:
            job.stop(graceful=False)
        dashboard.stop()
