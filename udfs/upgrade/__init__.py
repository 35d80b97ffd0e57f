"""Upgrade readiness: which clients break on a target Apache Kafka broker, from the request versions they sent.

``releases`` reads the request versions each broker release serves (package data,
written by ``generate`` from the real kafka-clients jars); ``usage`` folds
``connection_closed`` events into per-client usage; ``readiness`` judges usage
against a target release.
"""
