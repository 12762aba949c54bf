#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Opt-in real-client suites: run.sh SCRIPT.py ARGS... runs the script only
# when DOCKET_REALCLIENT=1 (they install and run real CLIs from npm), else
# exits 77 (meson: skipped).
set -u
if [ "${DOCKET_REALCLIENT:-0}" != 1 ]; then
	echo "real-client suite: set DOCKET_REALCLIENT=1 to run it"
	exit 77
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script=$1
shift
exec python3 "$here/$script" "$@"
