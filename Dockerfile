# Production image: web (daphne), worker and beat share it; see compose.yaml.
# Only what production needs: no local model wheels, no embedded Redis (the `embedded`
# extra), and the processes run as an unprivileged user.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 ARENA_ENV=production \
    ARENA_LOCAL_MODELS=0 ARENA_VAR_DIR=/var/lib/arena
WORKDIR /app
RUN useradd --system --uid 10001 --home-dir /var/lib/arena --create-home arena
COPY pyproject.toml ./
COPY arena ./arena
COPY battles ./battles
COPY panels ./panels
COPY debates ./debates
COPY agents ./agents
COPY leaderboard ./leaderboard
RUN pip install --no-cache-dir .
COPY . .
# collectstatic needs settings, not secrets: throwaway values for this step only.
RUN SECRET_KEY=build-only ALLOWED_HOSTS=build python manage.py collectstatic --noinput
USER arena
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
# A deep listen queue: Twisted's default (50) drops connections in a burst (see arena/webserver.py).
CMD ["daphne", "-e", "tcp:port=8000:interface=0.0.0.0:backlog=1024", "arena.asgi:application"]
