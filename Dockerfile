# Production image: web (daphne), worker and beat share it; see compose.yaml.
# Only what production needs: no local model wheels, no embedded Redis (the `embedded`
# extra), and the processes run as an unprivileged user.
FROM python:3.11-slim
# UV_COMPILE_BYTECODE: the packages' .pyc are built into the image. uv writes none by
# default and the processes write none (PYTHONDONTWRITEBYTECODE, and /opt/venv is not
# theirs), so each daphne, worker and command compiled Django, Celery, NumPy and SciPy from
# source as it started (seconds of CPU each).
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 ARENA_ENV=production \
    ARENA_LOCAL_MODELS=0 ARENA_VAR_DIR=/var/lib/arena \
    UV_PROJECT_ENVIRONMENT=/opt/venv UV_NO_CACHE=1 UV_COMPILE_BYTECODE=1 \
    PATH=/opt/venv/bin:$PATH
WORKDIR /app
# media: the folder compose mounts a shared volume on; made here, so that the volume is
# created the unprivileged user's.
RUN useradd --system --uid 10001 --home-dir /var/lib/arena --create-home arena \
    && install -d -o arena -g arena /var/lib/arena/media
# The locked set (uv.lock, hashes checked), without the `embedded` and `test` extras; the
# dependencies first, so a code change reuses this layer.
COPY requirements-uv.txt pyproject.toml uv.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements-uv.txt \
    && uv sync --locked --no-install-project
# The source only (.dockerignore leaves out local environments, .env files, var/ and the
# development folders); the project's own build leftovers go once it is installed.
COPY . .
RUN uv sync --locked --no-editable && rm -rf build ./*.egg-info
# collectstatic needs settings, not secrets: throwaway values for this step only.
RUN SECRET_KEY=build-only ALLOWED_HOSTS=build python manage.py collectstatic --noinput
USER arena
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
# A deep listen queue: Twisted's default (50) drops connections in a burst (see arena/webserver.py).
CMD ["daphne", "-e", "tcp:port=8000:interface=0.0.0.0:backlog=1024", "arena.asgi:application"]
