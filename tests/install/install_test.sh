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

# the man pages and the completion are where man(1) and bash-completion look
for page in "$src"/man/*.1; do
	find "$dir/root" -path "*/share/man/man1/${page##*/}" | grep -q . \
		|| fail "man page ${page##*/} is not installed to share/man/man1"
done
find "$dir/root" -path '*/bash-completion/completions/docket' | grep -q . \
	|| fail "the bash completion is not installed to bash-completion/completions"
echo "install_test: ok"
