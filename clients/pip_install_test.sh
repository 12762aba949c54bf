#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: pip_install_test.sh DOCKET PYTHON_PACKAGE_DIR EXAMPLES_DIR
# What docs/clients.md tells a runtime engineer to do, for real: `pip
# install` the package from the repository into a fresh virtual environment
# (offline: --no-index, --no-build-isolation with the system's setuptools
# and wheel), then run the ten-line quickstart with that installed package
# only (not the source tree) and check what it recorded.
# Exit 77 when the system Python lacks venv, pip, setuptools or wheel
# (Debian: python3-venv python3-pip python3-setuptools python3-wheel).
set -eu
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") pkg=$2 examples=$3
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import sys, venv, setuptools, wheel; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
	echo "SKIP: no python3 >= 3.9 with venv, setuptools and wheel"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m venv --system-site-packages "$work/venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv failed"; exit 77; }
"$work/venv/bin/python" -m pip --version >/dev/null 2>&1 || { echo "SKIP: no pip in the venv"; exit 77; }
# a copy: pip's setuptools build writes build/ and *.egg-info beside the sources
cp -r "$pkg" "$work/src"
"$work/venv/bin/python" -m pip install --no-index --no-build-isolation "$work/src" >"$work/pip.log" 2>&1 \
	|| { cat "$work/pip.log"; echo "FAIL: pip install clients/python"; exit 1; }
cd "$work"
where=$("$work/venv/bin/python" -c 'import docket_client; print(docket_client.__file__)')
case $where in
"$work/venv/"*) ;;
*) echo "FAIL: docket_client imported from $where, not the installed package"; exit 1 ;;
esac
PATH="$(dirname "$docket"):$PATH" "$work/venv/bin/python" "$examples/quickstart.py" "$work/ledger" >"$work/out" \
	|| { cat "$work/out"; echo "FAIL: the quickstart with the installed package"; exit 1; }
grep -qE '^allowed dt-[0-9a-f]{32} hi$' "$work/out" || { cat "$work/out"; echo "FAIL: quickstart output"; exit 1; }
"$docket" -L "$work/ledger" verify >/dev/null || { echo "FAIL: verify"; exit 1; }
n=$("$docket" -L "$work/ledger" log --json | grep -c '"invocation":"call-1"')
[ "$n" -eq 3 ] || { echo "FAIL: call-1 has $n events, expected intent, dispatch, outcome"; exit 1; }
echo "pip install clients/python: ok ($where)"
