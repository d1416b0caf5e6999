#!/usr/bin/env bash
# Print the URL of a PostgreSQL server the tests can use, starting the machine's local
# cluster when needed (Debian's postgresql package; `make postgres` installs it when
# missing). The role it prints may create and drop databases: each test gets its own.
# Prints nothing and exits 1 when no server can be had.
set -u
if [ -n "${PROCTOR_TEST_POSTGRES_URL:-}" ]; then echo "$PROCTOR_TEST_POSTGRES_URL"; exit 0; fi
command -v pg_lsclusters >/dev/null 2>&1 || exit 1
cluster=$(pg_lsclusters --no-header 2>/dev/null | head -n 1)
if [ -z "$cluster" ]; then  # the package is installed but its cluster was removed
  version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
  [ -n "$version" ] || exit 1
  pg_createcluster "$version" main >/dev/null 2>&1 || exit 1
  cluster=$(pg_lsclusters --no-header 2>/dev/null | head -n 1)
fi
read -r version name port status _ <<<"$cluster"
if [ "$status" != "online" ]; then
  pg_ctlcluster "$version" "$name" start >/dev/null 2>&1 || exit 1
fi
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -n -u postgres "$@"; fi; }
as_postgres psql -p "$port" -qtAc "SELECT 1 FROM pg_roles WHERE rolname='proctor_test'" 2>/dev/null | grep -q 1 \
  || as_postgres psql -p "$port" -qc "CREATE ROLE proctor_test LOGIN SUPERUSER PASSWORD 'proctor_test'" >/dev/null 2>&1 \
  || exit 1
echo "postgresql://proctor_test:proctor_test@127.0.0.1:${port}/postgres"
