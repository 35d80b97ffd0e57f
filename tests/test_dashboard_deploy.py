"""The shipped monitoring setup holds together: promtool accepts the Prometheus scrape config,
the Grafana dashboard queries only metrics the dashboard exposes through the provisioned
datasource, and docker-compose wires the dashboard, Prometheus and Grafana services.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from prometheus_client import generate_latest

from configwatch.records import Gauge
from sinks.dashboard.metrics import DashboardCollector, build_registry
from sinks.dashboard.state import DashboardState, Topics
from tests.dashboard_helpers import finding

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"


def _exposed_metric_names() -> set[str]:
    state = DashboardState(Topics("g", "a", "c"))
    state.fleet.apply("a/1", Gauge("a", "1", 1, 1, 1))
    state.alerts.add(finding())
    state.health.count("g", "ok")
    state.health.set_lag("g", 0, 1)
    text = generate_latest(build_registry(DashboardCollector(state, sse_clients=lambda: 0))).decode()
    return {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}


def test_promtool_accepts_the_scrape_config(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing: `make test` installs Debian's prometheus (scripts/system-deps.sh)"
    token = tmp_path / "dashboard-token"
    token.write_text("t")
    config = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    assert "credentials_file: /prometheus/dashboard-token" in config
    assert "configwatch-dashboard:8765" in config
    local = tmp_path / "prometheus.yml"
    local.write_text(config.replace("/prometheus/dashboard-token", str(token)))
    out = subprocess.run([promtool, "check", "config", str(local)], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS" in out.stdout + out.stderr


def test_grafana_dashboard_queries_only_exposed_metrics() -> None:
    dash = json.loads((DEPLOY / "grafana" / "dashboards" / "configwatch.json").read_text())
    datasource = (DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text()
    uid = re.search(r"uid:\s*(\S+)", datasource)
    assert uid is not None and "url: http://prometheus:9090" in datasource
    exposed = _exposed_metric_names() | {"up"}
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 10
    for panel in dash["panels"]:
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == uid.group(1), panel["title"]
    for expr in exprs:
        names = set(re.findall(r"\b(configwatch_[a-z_]+|up)\b", expr))
        assert names, expr
        assert names <= exposed, f"{expr}: {names - exposed} is not exposed by /metrics"
    referenced = {n for e in exprs for n in re.findall(r"\bconfigwatch_[a-z_]+\b", e)}
    for core in ("configwatch_client_connections", "configwatch_client_instances", "configwatch_fleet_connections",
                 "configwatch_alerts_total", "configwatch_dashboard_consumer_lag_records",
                 "configwatch_dashboard_last_update_age_seconds"):
        assert core in referenced, f"the Grafana dashboard never shows {core}"
    provider = (DEPLOY / "grafana" / "provisioning" / "dashboards" / "configwatch.yml").read_text()
    assert "path: /etc/grafana/dashboards" in provider


def test_compose_wires_dashboard_prometheus_and_grafana() -> None:
    compose = shutil.which("docker-compose")
    assert compose, "docker-compose missing: `make test` installs it (scripts/system-deps.sh)"
    out = subprocess.run([compose, "-f", str(REPO / "docker-compose.yml"), "config"], capture_output=True,
                         text=True, check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    services = subprocess.run([compose, "-f", str(REPO / "docker-compose.yml"), "config", "--services"],
                              capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert {"configwatch-dashboard", "prometheus", "grafana"} <= set(services)
    assert "- dashboard\n    - --host\n    - 0.0.0.0" in text
    assert "CONFIGWATCH_DASHBOARD_TOKEN" in text
    assert "deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro" in text
    assert "deploy/grafana/provisioning:/etc/grafana/provisioning:ro" in text
    assert "deploy/grafana/dashboards:/etc/grafana/dashboards:ro" in text
