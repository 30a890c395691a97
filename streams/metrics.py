"""Prometheus metrics. One place, one registry passed in; no patient or cell ids in labels."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from streams.exit_codes import CommandError


@dataclass
class Metrics:
    registry: CollectorRegistry
    records_in: Counter
    records_out: Counter
    dead_letters: Counter
    cells_decided: Counter
    pending_cells: Gauge
    llm_calls: Counter
    llm_resent: Counter
    llm_tokens: Counter
    llm_cost: Counter
    llm_latency: Histogram
    results: Counter
    llm_halted: Gauge
    breaker_state: Gauge
    consumer_lag: Gauge

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None) -> Metrics:
        r = registry or CollectorRegistry()
        return cls(
            registry=r,
            records_in=Counter("judgeflow_records_in_total", "Input records read",
                               ["worker", "topic"], registry=r),
            records_out=Counter("judgeflow_records_out_total", "Records emitted",
                                ["worker", "topic"], registry=r),
            dead_letters=Counter("judgeflow_dead_letters_total", "Records sent to a DLQ",
                                 ["worker", "error_type"], registry=r),
            cells_decided=Counter("judgeflow_cells_decided_total", "Cells decided by outcome",
                                  ["outcome"], registry=r),
            pending_cells=Gauge("judgeflow_pending_cells", "Cells held in detector state",
                                registry=r),
            llm_calls=Counter("judgeflow_llm_calls_total", "LLM requests by result",
                              ["worker", "provider", "status"], registry=r),
            llm_resent=Counter("judgeflow_llm_resent_calls_total", "LLM calls sent again "
                               "after the answer to an earlier send was lost in flight (a "
                               "worker killed, a timeout): each possibly paid twice",
                               ["worker", "provider"], registry=r),
            llm_tokens=Counter("judgeflow_llm_tokens_total", "LLM tokens by type",
                               ["worker", "provider", "type"], registry=r),
            llm_cost=Counter("judgeflow_llm_cost_usd_total", "LLM cost in USD",
                             ["worker", "provider"], registry=r),
            llm_latency=Histogram("judgeflow_llm_latency_seconds", "LLM request latency",
                                  ["worker", "provider"], registry=r,
                                  buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120)),
            results=Counter("judgeflow_results_total", "Results published by status",
                            ["worker", "kind", "status"], registry=r),
            llm_halted=Gauge("judgeflow_llm_halted", "1 while LLM calls are stopped until "
                             "restart (spend limit reached, billing)", ["provider", "reason"],
                             registry=r),
            breaker_state=Gauge("judgeflow_breaker_state", "LLM circuit breaker: 0 closed, "
                                "1 open (partitions paused), 2 half-open (one probe)",
                                ["worker"], registry=r),
            consumer_lag=Gauge("judgeflow_consumer_lag", "Input records not yet committed "
                               "(high watermark minus committed offset)", ["worker", "topic"],
                               registry=r),
        )

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        """Serve the registry on ``host:port`` (port 0: no endpoint). An address that cannot
        be bound (in use, not this machine's, no such host) is the operator's to fix: one
        line naming the settings, exit 2, as for any other setting."""
        if not port:
            return
        try:
            start_http_server(port, addr=host, registry=self.registry)
        except (OSError, OverflowError) as exc:
            raise CommandError(
                f"cannot serve metrics on {host}:{port} (JUDGEFLOW_METRICS_HOST, "
                f"JUDGEFLOW_METRICS_PORT): {getattr(exc, 'strerror', None) or exc}") from None
