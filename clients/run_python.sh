#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: run_python.sh DOCKET PYTHON_PACKAGE_DIR [EXAMPLES_DIR]  (exit 77: no Python >= 3.9)
# Runs the package's unittest suite, or with EXAMPLES_DIR its
# clients_example_test.sh on the Python examples.
set -eu
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") pkg=$2 examples=${3:-}
py=$(command -v python3 || true)
if [ -z "$py" ] || ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
	echo "SKIP: no python3 >= 3.9"; exit 77
fi
export DOCKET_BIN=$docket PYTHONDONTWRITEBYTECODE=1
if [ -n "$examples" ]; then
	export PYTHONPATH="$pkg/src${PYTHONPATH:+:$PYTHONPATH}"
	exec bash "$examples/clients_example_test.sh" "$docket" "$py" "$examples/"
fi
exec "$py" -m unittest discover -s "$pkg/tests" -t "$pkg/tests" -v
