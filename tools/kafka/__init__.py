"""Apache Kafka for judgeflow's tests and benchmarks: the broker's classpath from Maven
(:mod:`tools.kafka.classpath`, pinned in ``tools/kafka/pom.xml``) and a KRaft cluster on
loopback (:class:`tools.kafka.cluster.ApacheKafka`). Dev tooling only: nothing at runtime
imports it.
"""

from tools.kafka.classpath import KAFKA_VERSION, KafkaUnavailable, kafka_classpath
from tools.kafka.cluster import ApacheKafka

__all__ = ["KAFKA_VERSION", "ApacheKafka", "KafkaUnavailable", "kafka_classpath"]
