#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests/journal_postgres.rs (issue 28), from Debian's
# packages (`apt-get install postgresql`; any major version the package installs).
#
#   tests/support/postgres.sh up DIR PORT   # initdb in DIR, start, print the test URL
#   tests/support/postgres.sh down DIR      # stop it and delete DIR
#
# The server listens on 127.0.0.1:PORT only (and a Unix socket inside DIR), trusts every
# local connection (a throwaway: no password), runs with fsync off and autovacuum off (its
# workers are superuser backends a test's DROP DATABASE … WITH (FORCE) may not end), and has
# a role `vmctl_test` (LOGIN CREATEDB: each test creates its own database) and a database
# `vmctl_test`. PostgreSQL refuses to run as root: as root, the server runs as the `postgres`
# user the package created (DIR is handed to it); otherwise as the user running this.
# TLS: the server has a certificate for 127.0.0.1 from a CA made here (openssl, DIR/ca.crt);
# the URL printed names that CA (`sslrootcert=DIR/ca.crt`) and sets no sslmode, so vmctl's
# default (prefer) connects with TLS and verifies the server. The server takes connections
# without TLS too (sslmode=disable).
set -euo pipefail

usage() { echo "usage: $0 up DIR PORT | down DIR" >&2; exit 2; }

bindir() {
  local d
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return
  fi
  # Debian puts the server binaries in /usr/lib/postgresql/VERSION/bin (not on PATH).
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] || { echo "$0: no PostgreSQL server found (apt-get install postgresql)" >&2; exit 1; }
  echo "$d"
}

# Runs a command as the server's OS user.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

cmd=${1:-}
case "$cmd" in
  up)
    [ $# = 3 ] || usage
    dir=$2 port=$3
    BIN=$(bindir)
    # A server left over from an earlier run in DIR: stopped and replaced.
    if [ -d "$dir/data" ]; then
      as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
      rm -rf "$dir"
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_owner "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
      --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # A CA and the server's certificate (EC P-256, two days).
    (
      cd "$dir"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=vmctl test CA" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout ca.key -out ca.crt
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -subj "/CN=127.0.0.1" -keyout server.key -out server.csr
      printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=critical,CA:FALSE" \
        "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >server.ext
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile server.ext -out server.crt
      chmod 600 server.key
      [ "$(id -u)" = 0 ] && chown postgres: server.key server.crt
      true
    ) >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; exit 1; }
    as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c autovacuum=off -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$BIN/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 \
      -c "CREATE ROLE vmctl_test LOGIN CREATEDB" -c "CREATE DATABASE vmctl_test OWNER vmctl_test" >/dev/null
    echo "postgres://vmctl_test@127.0.0.1:$port/vmctl_test?sslrootcert=$dir/ca.crt"
    ;;
  down)
    [ $# = 2 ] || usage
    dir=$2
    [ -d "$dir/data" ] || exit 0
    BIN=$(bindir)
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
