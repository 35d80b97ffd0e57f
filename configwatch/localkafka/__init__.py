"""A single-node KRaft Kafka broker run from the project's Maven-resolved jars.

Used by ``configwatch kafka start|stop|status``, by ``configwatch run`` when no
``--bootstrap-servers`` is given, and by the test suite (one broker per run).
"""

from configwatch.localkafka.broker import BrokerInfo, LocalKafka, wait_until_ready
from configwatch.localkafka.embedded import bootstrap_servers, running_bootstrap

__all__ = ["BrokerInfo", "LocalKafka", "bootstrap_servers", "running_bootstrap", "wait_until_ready"]
