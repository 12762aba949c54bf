# SPDX-License-Identifier: Apache-2.0
# Helpers for the real-client suite (sourced): npm installs into a cache
# directory, skip (77) when npm cannot reach its registry, loopback stubs.

cache=${DOCKET_REALCLIENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docket-realclient}

# need_npm_package PKG BIN: the path of BIN from PKG, installed on first use.
need_npm_package() {
	local pkg=$1 bin=$2
	if [ ! -x "$cache/node_modules/.bin/$bin" ]; then
		command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
		if ! timeout 60 npm view "$pkg" version >/dev/null 2>&1; then
			echo "SKIP: npm cannot reach its registry"
			exit 77
		fi
		mkdir -p "$cache"
		timeout 600 npm install --prefix "$cache" --no-audit --no-fund "$pkg" >&2 ||
			{ echo "SKIP: npm install $pkg failed"; exit 77; }
	fi
	echo "$cache/node_modules/.bin/$bin"
}

# start_stub SCRIPT.py ARGS...: run a stand-in model API; sets STUB_PORT.
start_stub() {
	local py=$1
	shift
	python3 "$py" --port-file "$work/port" --idle 120 "$@" &
	stub_pid=$!
	for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
	STUB_PORT=$(cat "$work/port")
}

fails=0
check() {  # check WHAT COMMAND...: a named assertion
	local what=$1
	shift
	if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}

# ev JQ_FILTER: the ledger's events through jq (compact).
ev() { "$docket" -L "$work/ledger" log --json | jq -c "$1"; }

verifies() { "$docket" -L "$work/ledger" verify >/dev/null; }
