#!/usr/bin/env bash
# Print the URL of a PostgreSQL server the tests can use (Debian's postgresql package;
# `make postgres` installs it when missing). The role it prints may create and drop
# databases: each test gets its own. Prints nothing and exits 1 when no server can be had.
#
# The tests get a cluster of their own, `proctor_test`, made once with pg_createcluster and
# run without fsync, synchronous commits or full-page writes: its databases are thrown
# away, and each test's `CREATE DATABASE … TEMPLATE` would otherwise flush a whole database
# to disk (about a quarter of the PostgreSQL pass's time). Its data directory is in memory
# (/dev/shm) where that is a tmpfs with room: creating and dropping a database is a few
# hundred files made and unlinked, which took 0.38-0.43 s a database on this machine's
# ext4 disk against 0.02-0.05 s on tmpfs (tests/api/test_request_guard.py on PostgreSQL:
# 83 s -> 9 s). A cluster of ours whose data directory is on disk is remade in memory, and
# one whose in-memory directory is gone (a reboot clears it) is remade. The machine's own
# clusters are never reconfigured; where a cluster of the tests' own cannot be made (no
# root), the first cluster is used as it is.
set -u
if [ -n "${PROCTOR_TEST_POSTGRES_URL:-}" ]; then echo "$PROCTOR_TEST_POSTGRES_URL"; exit 0; fi
command -v pg_lsclusters >/dev/null 2>&1 || exit 1
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else sudo -n -u postgres "$@"; fi; }
NAME=proctor_test

cluster_named() { pg_lsclusters --no-header 2>/dev/null | awk -v name="$1" '$2 == name' | head -n 1; }

# Where the cluster's data lives: under /dev/shm when it is a tmpfs with 2 GiB free.
MEMORY=/dev/shm/proctor-test-postgres
in_memory() {
  [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || return 1
  [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge 2097152 ] 2>/dev/null
}

cluster=$(cluster_named "$NAME")
if [ -n "$cluster" ]; then
  read -r version _ _ _ _ directory _ <<<"$cluster"
  case "$directory" in
    "$MEMORY"/*) remake=$([ -d "$directory" ] || echo yes) ;;
    *) remake=$(in_memory && echo yes) ;;
  esac
  if [ -n "$remake" ] && as_root pg_dropcluster --stop "$version" "$NAME" >/dev/null 2>&1; then
    cluster=""
  fi
fi
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
  place=()
  if in_memory && as_root install -d -o postgres -g postgres -m 700 "$MEMORY" 2>/dev/null; then
    place=(-d "$MEMORY/$version")
  fi
  if [ -n "$version" ] && as_root pg_createcluster "$version" "$NAME" "${place[@]}" \
      -o fsync=off -o synchronous_commit=off -o full_page_writes=off \
      -o max_wal_size=256MB -o min_wal_size=32MB >/dev/null 2>&1; then
    cluster=$(cluster_named "$NAME")
  fi
fi
if [ -z "$cluster" ]; then  # no cluster of the tests' own: the machine's first one
  cluster=$(pg_lsclusters --no-header 2>/dev/null | head -n 1)
  if [ -z "$cluster" ]; then  # the package is installed but its cluster was removed
    version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1)
    [ -n "$version" ] || exit 1
    as_root pg_createcluster "$version" main >/dev/null 2>&1 || exit 1
    cluster=$(pg_lsclusters --no-header 2>/dev/null | head -n 1)
  fi
fi
read -r version name port status _ <<<"$cluster"
if [ "$status" != "online" ]; then
  as_root pg_ctlcluster "$version" "$name" start >/dev/null 2>&1 || exit 1
fi
as_postgres psql -p "$port" -qtAc "SELECT 1 FROM pg_roles WHERE rolname='proctor_test'" 2>/dev/null | grep -q 1 \
  || as_postgres psql -p "$port" -qc "CREATE ROLE proctor_test LOGIN SUPERUSER PASSWORD 'proctor_test'" >/dev/null 2>&1 \
  || exit 1
echo "postgresql://proctor_test:proctor_test@127.0.0.1:${port}/postgres"
