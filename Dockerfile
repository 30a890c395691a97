# judgeflow worker image: `docker build -t judgeflow:0.1.0 .`
# One image for every worker; the command picks it (`worker detect|judge|debrief`).
# Runtime dependencies only (with the Bedrock and Vertex clients): the `dev` extra (embedded
# broker, demo, benchmarks) is not installed.

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
RUN python -m venv /opt/judgeflow \
 && /opt/judgeflow/bin/pip install '.[bedrock,vertex]' \
 && /opt/judgeflow/bin/judgeflow --help >/dev/null

FROM python:3.11-slim-bookworm
RUN groupadd --system --gid 10001 judgeflow \
 && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/judgeflow judgeflow
COPY --from=build /opt/judgeflow /opt/judgeflow
# Metrics on all interfaces inside the container (the process default is loopback);
# worker state (Faust table caches) in a writable place, never the image's root.
ENV PATH=/opt/judgeflow/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    JUDGEFLOW_METRICS_HOST=0.0.0.0 \
    JUDGEFLOW_METRICS_PORT=9100 \
    JUDGEFLOW_STATE_DIR=/home/judgeflow/state
WORKDIR /home/judgeflow
USER 10001:10001
EXPOSE 9100
ENTRYPOINT ["judgeflow"]
CMD ["worker", "detect"]
