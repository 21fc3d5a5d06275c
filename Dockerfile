# webworld on Debian: Chromium from Debian's packages, the package from this checkout.
#   docker build -t webworld .                                  # `webworld build` (the default)
#   docker build --target env-server -t webworld-env .          # the OpenEnv server (below)
FROM python:3.11-slim-bookworm AS webworld

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

# The OpenEnv environment server: `webworld env serve` on the worlds mounted at /worlds (a
# `webworld build` output; the fast env needs its snapshots: `webworld env snapshot`). It binds
# 0.0.0.0 inside the container, so it needs a token, taken from the environment; clients send
# `Authorization: Bearer <token>`. Without one it refuses to start (exit 2).
#   docker run -p 8000:8000 -v "$PWD:/worlds" -e WEBWORLD_ENV_TOKEN=... webworld-env
#   docker run ... webworld-env env serve /worlds --host 0.0.0.0 --env live   # Chromium
FROM webworld AS env-server
RUN pip install --no-cache-dir ".[openenv]"
EXPOSE 8000
HEALTHCHECK CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health')"]
CMD ["env", "serve", "/worlds", "--host", "0.0.0.0", "--port", "8000"]

# The default target (last): `webworld build`, as before.
FROM webworld
