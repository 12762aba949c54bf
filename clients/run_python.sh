#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: run_python.sh DOCKET PYTHON_PACKAGE_DIR  (exit 77: no Python >= 3.9)
set -eu
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") pkg=$2
py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
	echo "SKIP: no python3 >= 3.9"; exit 77
fi
export DOCKET_BIN=$docket PYTHONDONTWRITEBYTECODE=1
exec "$py" -m unittest discover -s "$pkg/tests" -t "$pkg/tests" -v
