# configwatch image: Python 3.11, Java 17 (Spark, the local broker), Maven (resolves the pinned jars at build
# time; nothing is compiled).
FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless maven procps \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY cli ./cli
COPY configwatch ./configwatch
COPY policy ./policy
COPY streaming ./streaming
COPY udfs ./udfs
COPY sinks ./sinks
RUN pip install --no-cache-dir . && python -m configwatch.jars
ENV CONFIGWATCH_CHECKPOINT_DIR=/var/lib/configwatch/checkpoints \
    CONFIGWATCH_CACHE_DIR=/root/.cache/configwatch
ENTRYPOINT ["configwatch"]
CMD ["--help"]
