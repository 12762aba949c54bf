# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2154  # cc and cflags are the caller's arrays
# What an installed docket must give a user, wherever it was installed (a
# `meson install --destdir` tree or a scratch root the .debs were unpacked
# into). Sourced by install_test.sh and deb_test.sh.
#
#   check_installed_tree ROOT SOURCE_ROOT WORKDIR
#
# with the arrays `cc` (the compiler command, e.g. (ccache cc)) and `cflags`
# (extra flags, e.g. -fsanitize=...) set by the caller.
# ROOT holds the installed files below their prefix (ROOT/usr/local/... or
# ROOT/usr/...). The example is compiled with the installed docket.pc
# (PKG_CONFIG_SYSROOT_DIR=ROOT maps the .pc's prefix into ROOT), linked
# against the installed libdocket.so.0, run, and the sessions it recorded are
# checked with the installed docket binary (examples/example_test.sh). The
# headers must compile alone (C99, C++), and a C++ program must link (a
# plain build only: a sanitizer build's C++ runtime may not be the one the
# library was built with).

fail() { echo "${0##*/}: FAIL: $*" >&2; exit 1; }

# find_one ROOT PATTERN: the single installed file matching a path pattern
find_one() {
	local hits
	hits=$(find "$1" -path "$2" \( -type f -o -type l \) | sort)
	[ -n "$hits" ] || fail "nothing installed matches $2"
	[ "$(printf '%s\n' "$hits" | wc -l)" -eq 1 ] || fail "more than one file matches $2: $hits"
	printf '%s\n' "$hits"
}

# check_integrate ROOT WORKDIR: the installed docket's `integrate` writes
# hooks that run the installed docket-hook (beside it), and that hook,
# started as Claude Code would start it, records into the ledger.
check_integrate() {
	local root=$1 work=$2 bin hook fast cmd ledger settings events
	bin=$(find_one "$root" '*/bin/docket') || exit 1
	hook=$(find_one "$root" '*/bin/docket-hook') || exit 1
	[ -x "$hook" ] || fail "the installed docket-hook is not executable"
	# docket-hook-fast, where it is built, is what integrate writes (it
	# runs docket-hook beside it for what its server does not answer)
	fast=$(find "$root" -path '*/bin/docket-hook-fast' -type f | head -1)
	[ -z "$fast" ] || hook=$fast
	ledger="$work/integrate-ledger"
	settings="$work/integrate-settings.json"
	"$bin" -L "$ledger" init >/dev/null || fail "installed docket init failed"
	(cd "$work" && DOCKET_LEDGER="$ledger" "$bin" integrate claude --settings "$settings" >/dev/null) \
		|| fail "installed docket integrate claude failed"
	cmd=$(jq -r '.hooks.PreToolUse[0].hooks[0].command' "$settings")
	case $cmd in
	"'$hook' "*) ;;
	*) fail "integrate wrote a hook command that does not run the installed docket-hook: $cmd" ;;
	esac
	printf '%s' '{"session_id":"deb-s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_deb1","cwd":"/tmp","transcript_path":"/dev/null"}' \
		| (cd "$work" && DOCKET_LEDGER="$ledger" sh -c "$cmd") >/dev/null \
		|| fail "the installed docket-hook failed on a PreToolUse event: $cmd"
	events=$("$bin" -L "$ledger" log --json | jq -s '[.[] | select(.invocation == "toolu_deb1")] | length')
	[ "$events" -ge 1 ] || fail "the installed docket-hook recorded nothing"
}

check_installed_tree() {
	local root=$1 src=$2 work=$3 pc bin lib h flags version

	pc=$(find_one "$root" '*/pkgconfig/docket.pc') || exit 1
	bin=$(find_one "$root" '*/bin/docket') || exit 1
	lib=$(find_one "$root" '*/libdocket.so.0') || exit 1
	export PKG_CONFIG_PATH=${pc%/*}
	export PKG_CONFIG_SYSROOT_DIR=$root
	export LD_LIBRARY_PATH=${lib%/*}

	# every public header is installed, and nothing else under include/docket
	diff <(cd "$src/include/docket" && ls) <(cd "$(dirname "$(find_one "$root" '*/include/docket/docket.h')")" && ls) \
		|| fail "the installed include/docket differs from the source tree's (meson.build docket_public_headers)"
	version=$("$bin" --version) || fail "installed docket --version failed"
	[ "$version" = "docket $(pkg-config --modversion docket) (ledger format 3)" ] \
		|| fail "docket --version says '$version', docket.pc $(pkg-config --modversion docket)"
	while IFS= read -r h; do
		if grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$h" | grep -v '"docket/' >/dev/null; then
			fail "installed header ${h##*/} includes a header that is not installed"
		fi
	done < <(find "$root" -path '*/include/docket/*.h')

	# each header stands alone, as strict C99 and, when there is a C++
	# compiler, as C++ (DOCKET_EXTERN gives C linkage there)
	while IFS= read -r h; do
		h=docket/${h##*/}
		# shellcheck disable=SC2046
		printf '#include <%s>\n' "$h" | "${cc[@]}" -x c -std=c99 -pedantic -Wall -Wextra -Werror \
			-fsyntax-only $(pkg-config --cflags docket) - || fail "<$h> does not compile alone as C99"
		if command -v c++ >/dev/null; then
			# shellcheck disable=SC2046
			printf '#include <%s>\n' "$h" | c++ -x c++ -pedantic -Wall -Wextra -Werror \
				-fsyntax-only $(pkg-config --cflags docket) - || fail "<$h> does not compile as C++"
		fi
	done < <(find "$root" -path '*/include/docket/*.h')
	if command -v c++ >/dev/null && [ ${#cflags[@]} -eq 0 ]; then
		printf '#include <docket/docket.h>\n#include <cstdio>\nint main() { std::puts(docket_error_kind(DOCKET_ENOTFOUND)); }\n' \
			>"$work/cxx.cpp"
		# shellcheck disable=SC2046
		c++ -o "$work/cxx" "$work/cxx.cpp" $(pkg-config --cflags --libs docket) || fail "a C++ program does not link libdocket"
		[ "$("$work/cxx")" = not_found ] || fail "the C++ program did not run"
	fi

	# 1. the documented example, built against the installed tree only
	flags=$(pkg-config --cflags --libs docket) || fail "pkg-config --cflags --libs docket failed"
	case $flags in *"$root"*) ;; *) fail "pkg-config flags do not point into $root: $flags" ;; esac
	# shellcheck disable=SC2086
	"${cc[@]}" "${cflags[@]}" -o "$work/example" "$src/examples/runtime_example.c" $flags \
		|| fail "the example does not compile against the installed docket ($flags)"
	# (never `| grep -q` under pipefail: grep -q exits at the first match and
	# the writer's SIGPIPE then fails the pipeline, now and then)
	readelf -d "$work/example" | grep 'NEEDED.*\[libdocket\.so\.0\]' >/dev/null \
		|| fail "the example does not link libdocket.so.0"
	ldd "$work/example" | grep "libdocket.so.0 => $root" >/dev/null || fail "the example does not load the installed libdocket"
	bash "$src/examples/example_test.sh" "$bin" "$work/example" || fail "the installed example or docket failed"

	# 2. statically, through Requires.private / Libs.private
	flags=$(pkg-config --cflags --libs --static docket | sed 's/-ldocket\b//') || fail "pkg-config --static failed"
	# shellcheck disable=SC2086
	"${cc[@]}" "${cflags[@]}" -o "$work/example-static" "$src/examples/runtime_example.c" \
		"$(find_one "$root" '*/libdocket.a')" $flags || fail "the example does not link against libdocket.a ($flags)"
	"$work/example-static" "$work/static-ledger" >/dev/null || fail "the statically linked example failed"
	"$bin" -L "$work/static-ledger" verify >/dev/null || fail "verify failed on the static example's ledger"

	# 3. internal functions stay out of reach of the shared library's users
	printf '#include <stddef.h>\nvoid *docket_malloc(size_t);\nint main(void) { return docket_malloc(1) == NULL; }\n' \
		>"$work/internal.c"
	# shellcheck disable=SC2046
	if "${cc[@]}" "${cflags[@]}" -o "$work/internal" "$work/internal.c" $(pkg-config --libs docket) 2>"$work/internal.err"; then
		fail "a program could link docket_malloc, an internal function, from libdocket.so"
	fi
	grep -q "undefined reference to .docket_malloc" "$work/internal.err" \
		|| fail "linking an internal function failed for another reason: $(cat "$work/internal.err")"
}
