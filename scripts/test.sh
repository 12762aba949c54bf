#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Set up and run docket's whole default test suite, the way CI does:
# install missing Debian packages, then build and test twice (plain, and
# with AddressSanitizer + UndefinedBehaviorSanitizer). Warnings are errors
# only under CI (CI set): a user's newer compiler may warn where ours does
# not, and that must not stop them. Under CI a third build, clang at
# --buildtype=release, is compiled (not tested) to keep both compilers and
# the optimiser's warnings clean.
# Ends with one line: "N passed, N failed" (counted from meson's
# testlog.json of both builds; skipped tests are counted apart).
#
#   scripts/test.sh              both builds
#   scripts/test.sh --plain      plain build only (faster while developing)
#   SUITES="--suite slow"        extra meson test arguments (opt-in suites)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/deps.sh || exit 1
# the slow suite builds the Debian packages (test `deb`)
case ${SUITES:-} in *slow*) bash scripts/deps.sh --deb --quiet || exit 1 ;; esac

builds=(plain asan)
[ "${1:-}" = "--plain" ] && builds=(plain)
werror=()
[ -n "${CI:-}" ] && werror=(--werror)
jobs=$(nproc 2>/dev/null || echo 2)
status=0

for b in "${builds[@]}"; do
	dir="build-ci-$b"
	case $b in
	plain) opts=() ;;
	asan) opts=(-Db_sanitize=address,undefined -Db_lundef=false) ;;
	esac
	echo "== $b build ($dir)"
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "${werror[@]}" "${opts[@]}" >"$dir.setup.log" 2>&1 || {
			cat "$dir.setup.log"; echo "meson setup failed"; status=1; continue; }
	fi
	if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		tail -50 "$dir.build.log"
		echo "build failed ($b)"
		status=1
		continue
	fi
	rm -f "$dir/meson-logs/testlog.json"
	# shellcheck disable=SC2086
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C "$dir" --num-processes "$jobs" --no-suite slow --print-errorlogs ${SUITES:-} || status=1
done

# CI: the clang release build, compiled only (its tests are the plain ones)
if [ -n "${CI:-}" ] && [ "${1:-}" != "--plain" ]; then
	if command -v clang >/dev/null 2>&1; then
		echo "== clang release build (build-ci-clang, compile only)"
		if [ ! -f build-ci-clang/build.ninja ]; then
			CC=clang CXX=clang++ meson setup build-ci-clang --werror --buildtype=release \
				>build-ci-clang.setup.log 2>&1 || { cat build-ci-clang.setup.log; status=1; }
		fi
		if [ -f build-ci-clang/build.ninja ] && ! ninja -C build-ci-clang >build-ci-clang.build.log 2>&1; then
			tail -50 build-ci-clang.build.log
			echo "build failed (clang release)"
			status=1
		fi
	else
		echo "clang release build: clang is missing (scripts/deps.sh installs it)"
		status=1
	fi
fi

python3 - "${builds[@]}" <<'PY'
import json, sys
passed = failed = skipped = 0
for b in sys.argv[1:]:
    try:
        with open(f"build-ci-{b}/meson-logs/testlog.json") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line).get("result")
                if r in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif r == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        failed += 1
        print(f"no test log for the {b} build", file=sys.stderr)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
