"""The labelled evaluation fleet: applications of every client family, about a quarter of them with a problem.

Independent of ``policy/simulator`` and of the rule tests: its own client models
(``tests.eval.families``), faults (``tests.eval.faults``, ``tests.eval.misconfig``)
and consumer-group scenarios. ``build_fleet(seed, size)`` is deterministic.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, replace

from policy.api import RequestContext
from tests.eval import producer_faults, tokens
from tests.eval.clients import Client, Group, make_context
from tests.eval.families import BOOTSTRAPS, COOP, RANGE, App, base_push, pick_software, tunings
from tests.eval.faults import LEAKS, OUTLIER, Draft, Fault
from tests.eval.misconfig import ANOMALIES, OUTLIERS
from tests.eval.traps import TRAPS
from udfs.rules.catalog import CATALOG
from udfs.rules.client_checks import MAX_FETCH_BYTES, MAX_POLL_RECORDS
from udfs.rules.producer_checks import MIN_ACKS_ALL_REQUEST_TIMEOUT_MS, MIN_BUFFER_MEMORY

__all__ = ["Fleet", "build_fleet"]

_FAMILIES = (("java", 55), ("librdkafka", 17), ("kafka-python", 10), ("sarama", 9), ("franz-go", 9))
_JAVA_ROLES = (("producer", 30), ("consumer", 35), ("streams", 25), ("admin", 10))
_WORDS = ("orders", "payments", "inventory", "billing", "shipping", "catalog", "search", "fraud", "ledger", "audit",
          "pricing", "checkout", "loyalty", "notifications", "telemetry", "clickstream", "recommendations", "users")
_SUFFIX = ("service", "api", "worker", "enricher", "sink", "join-app", "aggregator", "indexer", "exporter")
LEAK_SHARE = 0.13
ANOMALY_SHARE = 0.13
TRAP_SHARE = 0.2
OUTLIER_SHARE = 0.012
GROUP_SCENARIOS = (("group/rolling-range-to-cooperative", 0.2), ("group/rolling-upgrade-2.8-to-3.x", 0.08),
                   ("group/assignor-drift", 0.1), ("group/kip-848-migration", 0.1))


@dataclass(frozen=True)
class Fleet:
    """Every client instance and consumer group, with labels."""

    clients: tuple[Client, ...]
    groups: tuple[Group, ...]
    seed: int


def _pick(rng: random.Random, table: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([k for k, _ in table], [w for _, w in table])[0]


def _principal(rng: random.Random, name: str) -> str:
    return rng.choice((f"User:svc-{name}", f"User:CN={name}.prod.svc,OU=platform,O=Example Corp,C=DE",
                       f"User:sa-{tokens.uuid4(rng)[:6]}", f"User:{name}"))


def _new_app(rng: random.Random, n: int) -> App:
    family = _pick(rng, _FAMILIES)
    role = _pick(rng, _JAVA_ROLES) if family == "java" else rng.choice(("producer", "consumer"))
    name = f"{rng.choice(_WORDS)}-{rng.choice(_SUFFIX)}-{n}"
    software = pick_software(rng, family)
    style = rng.choices(("app", "default", "pod", "build", "host", "spark"), (25, 30, 25, 8, 7, 5))[0]
    if style == "spark" and not (family == "java" and role == "consumer"):
        style = "pod"
    group = tokens.spark_group(rng) if style == "spark" else (f"{name}-group" if role == "consumer" else None)
    app = App(name=name, family=family, role=role, software=software, bootstrap=rng.choice(BOOTSTRAPS),
              group=group, id_style=style, eos=role == "streams" and software.release >= (2, 8) and rng.random() < 0.4,
              principal=_principal(rng, name), secure=rng.random() < 0.8)
    app.tunings = tunings(rng, app)
    return app


def _preference(rng: random.Random, faults: tuple[Fault, ...]) -> tuple[Fault, ...]:
    """The faults in a weighted random order (Efraimidis-Spirakis): an instance takes the first that applies."""
    return tuple(sorted(faults, key=lambda f: rng.random() ** (1.0 / f[1]), reverse=True))


def _group_scenario(rng: random.Random, app: App, size: int) -> str | None:
    if app.role != "consumer" or size < 2 or app.family not in ("java", "librdkafka"):
        return None
    for scenario, share in GROUP_SCENARIOS:
        if rng.random() < share:
            if scenario.endswith("kip-848-migration") and not (
                    (app.family == "java" and app.software.release >= (3, 7)) or
                    (app.family == "librdkafka" and app.software.release >= (2, 4))):
                return None
            if app.family == "librdkafka" and scenario != "group/assignor-drift":
                return None
            return scenario
    return None


def _apply_group(scenario: str, app: App, instance: int, dr: Draft) -> None:
    """Members in the second half of the group take the new setting; in a drift the others pin the old one."""
    if instance % 2 == 0:
        if scenario == "group/assignor-drift":
            dr.push.set("partition.assignment.strategy", RANGE if app.family == "java" else "range,roundrobin")
        return
    if scenario == "group/rolling-range-to-cooperative":
        dr.push.set("partition.assignment.strategy", f"{RANGE},{COOP}")
    elif scenario == "group/assignor-drift":
        dr.push.set("partition.assignment.strategy", COOP if app.family == "java" else "cooperative-sticky")
    elif scenario == "group/kip-848-migration":
        dr.push.set("group.protocol", "consumer")
        classic = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
        if any(k in dr.push.entries and not dr.push.entries[k].is_default for k in classic):
            dr.expected.add("consumer-protocol-ignores-classic-keys")


def _group_labels(scenario: str) -> tuple[frozenset[str], frozenset[str]]:
    if scenario == "group/assignor-drift":
        return frozenset({"group-assignment-drift"}), frozenset()
    if scenario == "group/kip-848-migration":
        return frozenset(), frozenset({"group-protocol-migration"})
    return frozenset(), frozenset({"group-assignment-transition"})


def _context(rng: random.Random, n: int, dr: Draft, instance_id: str) -> RequestContext:
    sw = dr.software or dr.app.software
    ctx = make_context(rng, n, sw, dr.client_id, instance_id, dr.app.principal, dr.app.secure)
    return ctx if dr.software is not None else replace(ctx, client_software_name=None, client_software_version=None)


def build_fleet(seed: int, size: int) -> Fleet:
    """``size`` client instances (give or take one application's instances) drawn from ``seed``."""
    rng = random.Random(seed)
    clients: list[Client] = []
    groups: list[Group] = []
    n_app = 0
    while len(clients) < size:
        n_app += 1
        app = _new_app(rng, n_app)
        instances = min(rng.choice((1, 2, 2, 3, 3, 4, 6, 8, 12)), max(1, size - len(clients)))
        if app.role == "streams":
            instances *= 2  # each instance: its StreamThread consumer and producer
        scenario = _group_scenario(rng, app, instances)
        if scenario == "group/rolling-upgrade-2.8-to-3.x":
            old = replace(app.software, version="2.8.2", release=(2, 8, 2))
        faults: list[tuple[Fault, ...]] = []
        if rng.random() < LEAK_SHARE:
            faults.append(_preference(rng, LEAKS))
        if rng.random() < ANOMALY_SHARE:
            faults.append(_preference(rng, ANOMALIES + producer_faults.FAULTS))
        elif rng.random() < TRAP_SHARE:  # a trap's "nothing fires" holds only without a planted misconfiguration
            faults.insert(0, _preference(rng, TRAPS + producer_faults.TRAPS))
        fault_seed = rng.getrandbits(64)
        members: list[str] = []
        classic = True  # every member on the classic protocol (assignors matter only there)
        for i in range(instances):
            n = len(clients)
            this = app
            if scenario == "group/rolling-upgrade-2.8-to-3.x" and i % 2 == 0:
                this = replace(app, software=old)
            push, cid = base_push(rng, this, n, i)
            dr = Draft(random.Random(fault_seed), this, push, cid, this.software)
            for order in faults:
                name = next((name for name, _, fault in order if fault(dr)), None)
                if name is not None:
                    dr.scenarios.append(name)
            if scenario is not None:
                _apply_group(scenario, this, i, dr)
            if rng.random() < OUTLIER_SHARE:
                _outlier(rng, dr)
            _derived_labels(dr)
            instance_id = tokens.uuid4(rng)
            clients.append(Client(
                context=_context(rng, n, dr, instance_id), configs=push.configs(), family=app.family,
                role=app.role, scenario=";".join(dr.scenarios) or "clean", expected=frozenset(dr.expected),
                allowed=frozenset(dr.allowed), secrets=tuple(dr.secrets), group=this.group if scenario else None))
            members.append(instance_id)
            protocol = push.get("group.protocol")
            classic = classic and protocol in (None, "classic")
        if scenario is not None and app.group is not None:
            expected, allowed = _group_labels(scenario)
            if not classic:  # under the consumer protocol the broker assigns: drift is not a finding
                expected, allowed = frozenset(), allowed | expected | {"group-protocol-migration"}
            groups.append(Group(app.group, scenario, expected, allowed, tuple(members)))
    return Fleet(tuple(_allow_rare_tunings(clients)), tuple(groups), seed)


_ANOMALY_RULES = frozenset(r.id for r in CATALOG if r.kind == "anomaly")
_CLASSIC_KEYS = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
_CLASSIC_SESSION_RULES = frozenset({"session-timeout-out-of-bounds", "heartbeat-not-below-session",
                                    "heartbeat-above-third"})


def _derived_labels(dr: Draft) -> None:
    """Labels that follow from the final push rather than from one fault."""
    if dr.software is None:  # no family: scored for leaks only (the anomaly rules' scope is family key sets)
        dr.allowed |= _ANOMALY_RULES - dr.expected
        dr.allowed |= dr.expected & _ANOMALY_RULES
        dr.expected -= _ANOMALY_RULES
        return
    entries = dr.push.entries
    buffer = entries.get("buffer.memory")
    if dr.producer and buffer is not None and float(buffer.value or "inf") < MIN_BUFFER_MEMORY:
        dr.expected.add("buffer-memory-too-small")  # the rule's documented bound, whichever fault set it
    timeout, acks = entries.get("request.timeout.ms"), entries.get("acks") or entries.get("request.required.acks")
    acks_all = acks.value in ("all", "-1") if acks is not None else dr.family == "librdkafka"
    if (dr.producer and dr.family in ("java", "librdkafka") and timeout is not None and not timeout.is_default
            and float(timeout.value or "inf") < MIN_ACKS_ALL_REQUEST_TIMEOUT_MS and acks_all):
        dr.expected.add("request-timeout-below-replica-lag")  # the rule's documented bound, whichever fault set it
    protocol = entries.get("group.protocol")
    if protocol is not None and protocol.value == "consumer" and not protocol.is_default:
        # KIP-848: the broker owns the session (group.consumer.session.timeout.ms, heartbeat interval) and the
        # assignment; the client's classic keys never reach a join, so their classic-protocol rules cannot apply
        # (a fault planted before a group's migration set group.protocol=consumer).
        dr.expected -= _CLASSIC_SESSION_RULES
        if any(k in entries and not entries[k].is_default for k in _CLASSIC_KEYS):
            dr.expected.add("consumer-protocol-ignores-classic-keys")


def _outlier(rng: random.Random, dr: Draft) -> None:
    """A one-off value on one instance, on a key no finding it already expects reads (the two would interfere)."""
    taken = {key for rule in CATALOG if rule.id in dr.expected for key in rule.keys}
    options = [o for o in OUTLIERS if o[0] == dr.family and o[1] == dr.app.role and o[2] not in taken]
    if not options:
        return
    _, _, key, values = rng.choice(options)
    value = min(float(rng.choice(values)) * 10 ** rng.uniform(-0.3, 0.3), 2_000_000_000.0)  # one-offs differ
    dr.push.set(key, str(int(value)))
    dr.expected.add(OUTLIER)
    dr.expected |= _beyond_range(key, value)
    dr.scenarios.append(f"outlier/{key}")


def _beyond_range(key: str, value: float) -> set[str]:
    """The range rules an outlier value also breaks (their documented bounds, ``udfs.rules.anomalies``)."""
    if key == "max.poll.records" and value > MAX_POLL_RECORDS:
        return {"max-poll-records-out-of-range"}
    if key in ("fetch.max.bytes", "max.partition.fetch.bytes") and value > MAX_FETCH_BYTES:
        return {"fetch-size-out-of-range"}
    return set()


def _peer(client: Client) -> tuple[str, str, str]:
    """The peers a tuning is compared with here: family, the push's role, release band of the key set."""
    version = client.context.client_software_version or ""
    major = version.split(".")[0]
    band = ("4" if major >= "4" else "3") if client.family == "java" else ".".join(version.split(".")[:2])
    role = "producer" if (client.context.client_id or "").endswith("-producer") else client.role
    return client.family, role, band


def _allow_rare_tunings(clients: list[Client], share: float = 0.05) -> list[Client]:
    """A value set by the user that few peers use is rare in this fleet: ``fleet-outlier`` is allowed on it."""
    seen: dict[tuple[tuple[str, str, str], str], list[float]] = defaultdict(list)
    parsed: list[list[tuple[str, float]]] = []
    for c in clients:
        mine = []
        for e in c.configs:
            value = _number(e.value)
            if value is not None:
                seen[(_peer(c), e.key)].append(value)
                if not e.is_default:
                    mine.append((e.key, value))
        parsed.append(mine)
    out = []
    for c, mine in zip(clients, parsed, strict=True):
        peers = [seen[(_peer(c), k)] for k, _ in mine]
        near = [sum(_near(v, p) for p in ps) for (_, v), ps in zip(mine, peers, strict=True)]
        rare = any(n < max(2.0, share * len(ps)) for n, ps in zip(near, peers, strict=True))
        planted = [n for (k, _), n in zip(mine, near, strict=True) if f"outlier/{k}" in c.scenario]
        if OUTLIER in c.expected and any(n > 1 for n in planted):  # another instance drew the same value
            c = replace(c, expected=c.expected - {OUTLIER}, allowed=c.allowed | {OUTLIER})
        elif rare and OUTLIER not in c.expected:
            c = replace(c, allowed=c.allowed | {OUTLIER})
        out.append(c)
    return out


def _near(a: float, b: float) -> bool:
    """Whether two positive values are the same setting (within 0.05 decades, about 12%)."""
    return abs(math.log10(a) - math.log10(b)) <= 0.05


def _number(value: str | None) -> float | None:
    try:
        x = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return x if x > 0 and math.isfinite(x) else None
