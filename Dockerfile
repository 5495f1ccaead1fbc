# prefixgate: one image for the proxy (`prefixgate serve`) and the local engine
# (`prefixgate local`, CPU torch). docker-compose.yml runs both from it.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PREFIXGATE_HOME=/var/lib/prefixgate

WORKDIR /app
# torch's CPU build first (the default index would pull a multi-GB CUDA one)
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"
COPY pyproject.toml README.md ./
COPY proxy ./proxy
COPY analyzer ./analyzer
COPY kvcache ./kvcache
RUN pip install ".[local]" \
    && useradd --system --home-dir /var/lib/prefixgate --create-home prefixgate \
    && chmod 0700 /var/lib/prefixgate

USER prefixgate
EXPOSE 8080 8000
# /prefixgate/health needs no admin token; 503 (degraded) fails the check
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/prefixgate/health', timeout=2)"
ENTRYPOINT ["prefixgate"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
