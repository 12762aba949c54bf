#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: run_typescript.sh DOCKET SOURCE_DIR WORK_DIR [EXAMPLES_DIR | --build-only]
# Copies the package into WORK_DIR (the build tree: no compiled output in the
# source tree), installs its dev dependencies (tsc, @types/node) with npm,
# compiles and runs `node --test`. Exit 77 without Node >= 20 and npm, or
# when npm cannot reach its registry and nothing is installed yet. With
# EXAMPLES_DIR, compiles its *.ts against the package (they import
# "docket-client" by name) and runs its clients_example_test.sh instead.
set -eu
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") src=$2 work=$3 examples=${4:-}
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
[ "$examples" = --build-only ] && exit 0
if [ -n "$examples" ]; then
	rm -rf examples && mkdir examples && cp "$examples"/*.ts examples/
	printf '{"extends":"./tsconfig.json","include":["examples/*.ts"]}\n' > tsconfig.examples.json
	node_modules/.bin/tsc -p tsconfig.examples.json
	EXAMPLE_EXT=js exec bash "$examples/clients_example_test.sh" "$docket" node "$work/dist/examples/"
fi
DOCKET_BIN=$docket exec node --test dist/test/client.test.js
