#!/usr/bin/env bash
# Throwaway PostgreSQL 15 + pgvector for mindbank's test suite (Debian 12, run as root).
#
#   scripts/postgres.sh install   # apt PostgreSQL 15 + server headers, build pgvector from Debian source (idempotent)
#   scripts/postgres.sh start     # cluster under /tmp/mindbank-pg on 127.0.0.1:54329, trust auth (idempotent)
#   scripts/postgres.sh stop      # stop that cluster (no-op when it is not running)
#   scripts/postgres.sh url       # print the DSN of the test template database
#
# Debian 12 ships no pgvector package, so `install` fetches the pgvector source package from Debian trixie through a
# private apt configuration under /tmp/aptsrc (the system's apt sources are never touched) and builds it with
# OPTFLAGS="" (no -march=native, so the build runs on any x86-64 machine).
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin
PG_CONFIG="$PG_BIN/pg_config"
ROOT=${MINDBANK_PG_ROOT:-/tmp/mindbank-pg}
PORT=${MINDBANK_PG_PORT:-54329}
HOST=127.0.0.1
DB=mindbank_test

log() { echo "postgres.sh: $*" >&2; }

as_postgres() {
    # initdb refuses to run as root; when we are already an unprivileged user run directly
    if [ "$(id -u)" = 0 ]; then
        su postgres -s /bin/bash -c "$1"
    else
        bash -c "$1"
    fi
}

install_server() {
    # the server binary and the server headers (needed to build pgvector) both have to be present to skip apt
    if [ -x "$PG_BIN/pg_ctl" ] && [ -f /usr/include/postgresql/15/server/postgres.h ]; then
        log "PostgreSQL 15 and its server headers already installed"
        return
    fi
    if [ -x "$PG_BIN/pg_ctl" ] && pg_share_has_vector; then
        log "PostgreSQL 15 and pgvector already installed"
        return
    fi
    log "installing PostgreSQL 15 with apt"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql postgresql-server-dev-15
}

pg_share_has_vector() {
    [ -x "$PG_CONFIG" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/vector.control" ]
}

install_pgvector() {
    if pg_share_has_vector; then
        log "pgvector already installed"
        return
    fi
    log "building pgvector from the Debian source package"
    if ! command -v make >/dev/null || ! command -v gcc >/dev/null; then
        # minimal images may lack a compiler; the server headers alone do not pull one in
        DEBIAN_FRONTEND=noninteractive apt-get install -y make gcc libc6-dev
    fi
    mkdir -p /tmp/aptsrc/parts /tmp/aptsrc/lists/partial
    local mirror
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$mirror" >/tmp/aptsrc/parts/src.sources
    local apto=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/tmp/aptsrc/parts
        -o Dir::State::Lists=/tmp/aptsrc/lists)
    apt-get "${apto[@]}" update
    local work
    work=$(mktemp -d /tmp/pgvector-build.XXXXXX)
    (
        cd "$work"
        apt-get "${apto[@]}" source --download-only pgvector
        tar xzf pgvector_*.orig.tar.gz
        cd pgvector-*/
        make PG_CONFIG="$PG_CONFIG" OPTFLAGS="" -j"$(nproc)"
        make PG_CONFIG="$PG_CONFIG" install
    )
    rm -rf "$work"
    pg_share_has_vector || { log "pgvector build did not install vector.control"; exit 1; }
}

running() {
    [ -f "$ROOT/data/postmaster.pid" ] && as_postgres "$PG_BIN/pg_ctl -D $ROOT/data status" >/dev/null 2>&1
}

psql_q() {
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PORT" -U postgres "$@"
}

start() {
    if running; then
        log "cluster already running on $HOST:$PORT"
    else
        mkdir -p "$ROOT"
        chown postgres:postgres "$ROOT" 2>/dev/null || true
        if [ ! -f "$ROOT/data/PG_VERSION" ]; then
            rm -rf "$ROOT/data"
            as_postgres "$PG_BIN/initdb -D $ROOT/data -U postgres --auth=trust -E UTF8 --locale=C.UTF-8" >/dev/null
        fi
        # fsync off and a small checkpoint budget: a throwaway test cluster trades durability for speed
        as_postgres "$PG_BIN/pg_ctl -D $ROOT/data -l $ROOT/log.txt -w start -o \"-p $PORT -k $ROOT \
            -c listen_addresses=$HOST -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
            -c max_connections=200\"" >/dev/null
        log "cluster started on $HOST:$PORT (data in $ROOT/data, log in $ROOT/log.txt)"
    fi
    if [ -z "$(psql_q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" ]; then
        psql_q -d postgres -c "CREATE DATABASE $DB"
    fi
    PGOPTIONS="-c client_min_messages=warning" psql_q -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS vector"
}

stop() {
    if running; then
        as_postgres "$PG_BIN/pg_ctl -D $ROOT/data -m fast -w stop" >/dev/null
        log "cluster stopped"
    else
        log "cluster not running"
    fi
}

url() {
    echo "postgresql://postgres@$HOST:$PORT/$DB"
}

case "${1:-}" in
    install) install_server; install_pgvector ;;
    start) start ;;
    stop) stop ;;
    url) url ;;
    *)
        echo "usage: $0 {install|start|stop|url}" >&2
        exit 2
        ;;
esac
