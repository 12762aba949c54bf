# SPDX-License-Identifier: Apache-2.0
#
# pg.sh: a throwaway PostgreSQL server for the fleet tests (sourced).
#
#   . tests/fleet/pg.sh
#   pg_start            # initdb + pg_ctl into a temp dir; exports PGHOST,
#                       # PGPORT, PGUSER, PGDATABASE, PG_URL
#   pg_restart / pg_stop_server / pg_start_server
#   pg_start_another / pg_stop_another   # a second server, in PG2_DIR
#   pg_sql "SELECT 1"   # psql as the superuser, tuples only
#
# The server listens on a Unix socket only (listen_addresses = ''), in the
# temp dir; it is stopped and the dir removed when the shell exits (trap),
# whatever happened. As root (CI) the server runs as the `postgres` user,
# which owns the temp dir. The superuser `docket_admin` connects without a
# password over the socket (trust); every other role needs its password
# (scram-sha-256), so the auth-failure tests mean something.
#
# When the binaries are absent it runs scripts/deps.sh once; if they still
# cannot be found the test exits 77 (skipped).

pg_find_bin() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { PG_BIN=$d; return 0; }
	done
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		PG_BIN=$(dirname "$(command -v initdb)")
		return 0
	fi
	return 1
}

pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

pg_cleanup() {
	if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR" ]; then
		pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
		rm -rf "$PG_DIR"
	fi
}

pg_start_server() {
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 start >/dev/null || {
		echo "pg.sh: the server did not start:" >&2
		tail -20 "$PG_DIR/log" >&2
		exit 99
	}
}

pg_stop_server() {
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" -w stop >/dev/null
}

pg_restart() {
	pg_stop_server "${1:-fast}" && pg_start_server
}

pg_initdb() {
	pg_as "$PG_BIN/initdb" -D "$1" -U docket_admin -A trust -E UTF8 --no-locale \
		--no-sync >"$PG_DIR/initdb.log" 2>&1 || {
		cat "$PG_DIR/initdb.log" >&2
		echo "pg.sh: initdb failed" >&2
		return 1
	}
}

# initdb takes seconds: with DOCKET_PG_TEMPLATE (the test suite sets it to a
# directory in the build tree) it runs once, under a lock, and every server
# starts from a copy of that pristine cluster.
pg_template() {
	(
		flock 9
		[ -f "$DOCKET_PG_TEMPLATE/PG_VERSION" ] && exit 0
		pg_initdb "$PG_DIR/template" || exit 1
		rm -rf "$DOCKET_PG_TEMPLATE"
		cp -a "$PG_DIR/template" "$DOCKET_PG_TEMPLATE.tmp" && mv "$DOCKET_PG_TEMPLATE.tmp" "$DOCKET_PG_TEMPLATE"
		rm -rf "$PG_DIR/template"
	) 9>"$DOCKET_PG_TEMPLATE.lock"
}

# pg_configure DIR: the settings and the authentication of a test server
# whose cluster is DIR/data, listening on a socket in DIR only
pg_configure() {
	cat >>"$1/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$1'
unix_socket_permissions = 0777
port = 5432
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = ${DOCKET_PG_SHARED_BUFFERS:-512MB}
wal_buffers = 16MB
max_wal_size = 4GB
shared_preload_libraries = 'pg_stat_statements'
CONF
	cat >"$1/data/pg_hba.conf" <<HBA
local all docket_admin trust
local all all scram-sha-256
HBA
}

# a fresh cluster in DIR/data (from the template when there is one)
pg_cluster() {
	if [ -n "${DOCKET_PG_TEMPLATE:-}" ]; then
		pg_template && cp -a "$DOCKET_PG_TEMPLATE" "$1/data" || return 1
	else
		pg_initdb "$1/data" || return 1
	fi
	pg_configure "$1"
}

pg_start() {
	if ! pg_find_bin; then
		local root
		root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
		bash "$root/scripts/deps.sh" --quiet >/dev/null 2>&1 || true
		pg_find_bin || { echo "pg.sh: PostgreSQL binaries are absent and cannot be installed: skipped" >&2; exit 77; }
	fi
	PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/docket-pg.XXXXXX")
	trap pg_cleanup EXIT
	[ "$(id -u)" -eq 0 ] && chown postgres: "$PG_DIR"
	pg_cluster "$PG_DIR" || exit 99
	pg_start_server
	export PGHOST=$PG_DIR PGPORT=5432 PGUSER=docket_admin PGDATABASE=postgres
	export PG_URL="postgresql:///postgres?host=$PG_DIR&user=docket_admin"
	unset PGPASSWORD PGSERVICE PGSERVICEFILE PGPASSFILE
}

# pg_start_another: a second server, in PG2_DIR (its socket there), for the
# calling (sub)shell, which must stop it (pg_stop_another, e.g. in a trap)
pg_start_another() {
	PG2_DIR=$(mktemp -d "${TMPDIR:-/tmp}/docket-pg2.XXXXXX")
	[ "$(id -u)" -eq 0 ] && chown postgres: "$PG2_DIR"
	pg_cluster "$PG2_DIR" || return 1
	pg_as "$PG_BIN/pg_ctl" -D "$PG2_DIR/data" -l "$PG2_DIR/log" -w -t 30 start >/dev/null || {
		tail -20 "$PG2_DIR/log" >&2
		return 1
	}
}

pg_stop_another() {
	if [ -n "${PG2_DIR:-}" ] && [ -d "$PG2_DIR" ]; then
		pg_as "$PG_BIN/pg_ctl" -D "$PG2_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
		rm -rf "$PG2_DIR"
	fi
}

pg_sql() {
	PGOPTIONS='--client-min-messages=warning' psql -X -q -v ON_ERROR_STOP=1 -tA "$@"
}
