"""Kafka JSON message definitions used by the gateway and the client (package data).

ApiVersions v0-v5 and PushConfig v0 as the draft PushConfig KIP declares them,
in Apache Kafka's message-definition format, read by kafka-python's schema loader.
"""
