#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Install the Debian packages docket needs to build, test and run its demo.
# As root: apt-get install -y what is missing. Otherwise: print the exact
# command and fail, so nothing half-works.
#
#   scripts/deps.sh          build + test + demo packages
#   scripts/deps.sh --quiet  say nothing when everything is there
#   scripts/deps.sh --deb    also the Debian build tools (the slow test `deb`:
#                            dpkg-buildpackage, lintian); --deb --quiet works too
set -euo pipefail

packages=(
	build-essential clang pkg-config meson ninja-build python3
	liblmdb-dev libprotobuf-c-dev protobuf-c-compiler libzstd-dev
	libgit2-dev libjansson-dev libsimdjson-dev libfyaml-dev libssl-dev
	libcmocka-dev libsqlite3-dev libpq-dev libcurl4-openssl-dev
	lmdb-utils zstd git jq man-db
	postgresql
)

quiet=0
for arg in "$@"; do
	case $arg in
	--quiet) quiet=1 ;;
	--deb) packages+=(debhelper dpkg-dev fakeroot lintian) ;;
	*) echo "usage: deps.sh [--quiet] [--deb]" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	[ $quiet -eq 1 ] || echo "deps: all ${#packages[@]} packages are installed"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages: ${missing[*]}" >&2
	echo "deps: run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed ${#missing[@]} package(s)"
