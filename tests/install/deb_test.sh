#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deb (suite slow): `dpkg-buildpackage -us -uc -b` on a copy of the source
# tree, then the three packages unpacked into a scratch root (dpkg -x) and
# used as an outside program would (tests/install/lib.sh), and lintian on
# them. Exit 77 (skip) when the Debian build tools are missing:
# `scripts/deps.sh --deb` installs them.
#
#   deb_test.sh SOURCE_ROOT CC...
set -euo pipefail
src=$(cd "$1" && pwd)
shift
cc=("$@")
cflags=()
. "$src/tests/install/lib.sh"

for tool in dpkg-buildpackage dh dpkg-checkbuilddeps; do
	command -v "$tool" >/dev/null || { echo "deb_test: SKIP: $tool is missing (scripts/deps.sh --deb)"; exit 77; }
done
if ! (cd "$src" && dpkg-checkbuilddeps -B -P nocheck) 2>"${TMPDIR:-/tmp}/deb_test.$$"; then
	echo "deb_test: SKIP: build dependencies missing: $(cat "${TMPDIR:-/tmp}/deb_test.$$")"
	rm -f "${TMPDIR:-/tmp}/deb_test.$$"
	exit 77
fi
rm -f "${TMPDIR:-/tmp}/deb_test.$$"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
version=$(cd "$src" && dpkg-parsechangelog -S Version)
tree="$dir/docket-$version"
mkdir -p "$tree" "$dir/root" "$dir/work"
# the source as a clean checkout would have it: no build directories
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' --exclude=./.docket \
	--exclude=./debian/.debhelper --exclude=./debian/tmp -cf - . | tar -C "$tree" -xf -

echo "deb_test: building the packages (dpkg-buildpackage -us -uc -b, nocheck)"
if ! (cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=2" DEB_BUILD_PROFILES=nocheck \
	dpkg-buildpackage -us -uc -b) >"$dir/build.log" 2>&1; then
	tail -60 "$dir/build.log" >&2
	fail "dpkg-buildpackage failed"
fi
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
for p in docket libdocket0 libdocket-dev; do
	[ -f "$dir/${p}_${version}_$arch.deb" ] || fail "no ${p}_${version}_$arch.deb was built"
done

# each package holds what it should
contents() { dpkg-deb -c "$dir/${1}_${version}_$arch.deb" | awk '{print $6}' | sed 's|^\./|/|'; }
contents docket | grep -x /usr/bin/docket >/dev/null || fail "docket lacks /usr/bin/docket"
contents docket | grep -x /usr/bin/docket-hook >/dev/null || fail "docket lacks /usr/bin/docket-hook (integrate writes it into every hook)"
contents docket | grep -x /usr/share/man/man1/docket-verify.1.gz >/dev/null || fail "docket lacks the man pages"
contents docket | grep -x /usr/share/bash-completion/completions/docket >/dev/null || fail "docket lacks the bash completion"
contents libdocket0 | grep '/libdocket\.so\.0\.' >/dev/null || fail "libdocket0 lacks libdocket.so.0.*"
contents libdocket0 | grep -E '\.(h|a|pc)$|/libdocket\.so$' && fail "libdocket0 holds development files"
contents libdocket-dev | grep -x /usr/include/docket/docket.h >/dev/null || fail "libdocket-dev lacks the headers"
contents libdocket-dev | grep '/pkgconfig/docket\.pc$' >/dev/null || fail "libdocket-dev lacks docket.pc"
dpkg-deb -f "$dir/libdocket-dev_${version}_$arch.deb" Depends | grep "libdocket0 (= $version)" >/dev/null \
	|| fail "libdocket-dev does not depend on libdocket0 (= $version)"

for p in docket libdocket0 libdocket-dev; do
	dpkg -x "$dir/${p}_${version}_$arch.deb" "$dir/root"
done
[ "$("$dir/root/usr/bin/docket" --version)" = "docket $version (ledger format 3)" ] \
	|| fail "the packaged docket --version does not say $version"
check_installed_tree "$dir/root" "$src" "$dir/work"
check_integrate "$dir/root" "$dir/work"

if command -v lintian >/dev/null; then
	lintian --fail-on error,warning \
		"$dir"/*_"$version"_"$arch".deb >"$dir/lintian.log" 2>&1 || {
		cat "$dir/lintian.log" >&2; fail "lintian found problems"; }
	cat "$dir/lintian.log"
else
	echo "deb_test: lintian is not installed: not run (scripts/deps.sh --deb)"
fi
echo "deb_test: ok"
