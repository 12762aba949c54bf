#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install: `meson install --destdir` this build into a scratch directory,
# then use it as an outside program would (tests/install/lib.sh).
#
#   install_test.sh MESON BUILD_ROOT SOURCE_ROOT B_SANITIZE fuzz|nofuzz CC...
#
# An ASan/UBSan-built libdocket needs its clients built with the same
# sanitizers (its objects call into the sanitizer runtimes), so with
# B_SANITIZE other than "none" the example is compiled with -fsanitize too.
# A -Dfuzz=true build without a sanitizer is skipped: its libdocket.so calls
# the coverage hooks that only libFuzzer or a sanitizer runtime defines (with
# -Db_sanitize=address the example gets them from ASan's runtime).
set -euo pipefail
meson=$1 build=$2 src=$3 sanitize=$4 fuzz=$5
shift 5
cc=("$@")
if [ "$fuzz" = fuzz ] && [ "$sanitize" = none ]; then
	echo "install_test: SKIP: a -Dfuzz=true libdocket.so built without a sanitizer needs libFuzzer's runtime in every client"
	exit 77
fi
. "$src/tests/install/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/root" "$dir/work"

"$meson" install -C "$build" --destdir "$dir/root" --no-rebuild --quiet >"$dir/install.log" 2>&1 \
	|| { cat "$dir/install.log" >&2; fail "meson install failed"; }

cflags=()
[ "$sanitize" = none ] || cflags+=("-fsanitize=$sanitize")
check_installed_tree "$dir/root" "$src" "$dir/work"
check_integrate "$dir/root" "$dir/work"

# the man pages and the completion are where man(1) and bash-completion look
for page in "$src"/man/*.1; do
	find "$dir/root" -path "*/share/man/man1/${page##*/}" | grep . >/dev/null \
		|| fail "man page ${page##*/} is not installed to share/man/man1"
done
find "$dir/root" -path '*/bash-completion/completions/docket' | grep . >/dev/null \
	|| fail "the bash completion is not installed to bash-completion/completions"

# the same checks must fail on a broken install: a header or the soname link missing
expect_broken() {
	local what=$1 path=$2 message=$3
	rm -rf "$dir/broken" "$dir/work2"
	cp -a "$dir/root" "$dir/broken"
	mkdir "$dir/work2"
	rm -f "$(find "$dir/broken" -path "$path" | head -1)"
	if (check_installed_tree "$dir/broken" "$src" "$dir/work2") >"$dir/broken.log" 2>&1; then
		fail "an install without $what passes the checks"
	fi
	grep -qF -- "$message" "$dir/broken.log" || fail "without $what the checks fail for another reason: $(cat "$dir/broken.log")"
}
expect_broken "include/docket/ledger.h" '*/include/docket/ledger.h' "the installed include/docket differs"
expect_broken "libdocket.so.0" '*/libdocket.so.0' "nothing installed matches */libdocket.so.0"
# and integrate's check on an install without the hook binary it names
rm -rf "$dir/broken" "$dir/work2"
cp -a "$dir/root" "$dir/broken"
mkdir "$dir/work2"
rm -f "$(find "$dir/broken" -path '*/bin/docket-hook' | head -1)"
if (check_integrate "$dir/broken" "$dir/work2") >"$dir/broken.log" 2>&1; then
	fail "an install without docket-hook passes the integrate check"
fi
grep -qF "nothing installed matches */bin/docket-hook" "$dir/broken.log" \
	|| fail "without docket-hook the integrate check fails for another reason: $(cat "$dir/broken.log")"
echo "install_test: ok"
