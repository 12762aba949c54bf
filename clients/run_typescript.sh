#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: run_typescript.sh DOCKET SOURCE_DIR WORK_DIR
# Copies the package into WORK_DIR (the build tree: no compiled output in the
# source tree), installs its dev dependencies (tsc, @types/node) with npm,
# compiles and runs `node --test`. Exit 77 without Node >= 20 and npm, or
# when npm cannot reach its registry and nothing is installed yet.
set -eu
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") src=$2 work=$3
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "SKIP: node or npm missing"; exit 77
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
	echo "SKIP: node $(node --version) < 20"; exit 77
fi
mkdir -p "$work"
rm -rf "$work/src" "$work/test" "$work/dist"
cp -R "$src/src" "$src/test" "$src/package.json" "$src/tsconfig.json" "$work/"
[ -f "$src/package-lock.json" ] && cp "$src/package-lock.json" "$work/"
cd "$work"
if ! npm install --ignore-scripts --no-audit --no-fund --loglevel=error >npm-install.log 2>&1; then
	if [ ! -x node_modules/.bin/tsc ]; then
		cat npm-install.log; echo "SKIP: npm could not install the dev dependencies (registry unreachable?)"; exit 77
	fi
	echo "npm install failed; using the dev dependencies already installed"
fi
node_modules/.bin/tsc -p .
DOCKET_BIN=$docket exec node --test dist/test/client.test.js
