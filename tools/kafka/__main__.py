"""``python -m tools.kafka``: resolve and cache Apache Kafka's classpath (``make bootstrap``)."""

from tools.kafka.classpath import main

raise SystemExit(main())
