# webworld on Debian: Chromium from Debian's packages, the package from this checkout.
FROM python:3.11-slim-bookworm

RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium graphviz \
    && rm -rf /var/lib/apt/lists/*
ENV WEBWORLD_CHROMIUM=/usr/bin/chromium \
    PYTHONUNBUFFERED=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY webworld ./webworld
COPY fsm_specs ./fsm_specs
RUN pip install --no-cache-dir .

# Outputs (fsm_specs/, trajectories/) land in /app; mount a volume there to keep them.
ENTRYPOINT ["webworld"]
CMD ["build"]
