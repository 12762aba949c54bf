#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The HTML report in a real browser (meson suite 'browser'):
#   report-browser.sh DOCKET_BIN SOURCE_ROOT [SCREENSHOT_OUT]
# builds a ledger from the fixtures, writes the report, renders it in headless
# Chromium (Debian's `chromium`, installed with apt-get when missing and
# possible) and checks that a screenshot is produced, that the DOM is the
# report and that the page logged no error and loaded nothing. Exit 77 (meson:
# skipped) when Chromium cannot be had.
set -u

docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
shot_out=${3:-${DOCKET_SCREENSHOT:-}}

find_chromium() {
	local c
	for c in chromium chromium-browser google-chrome; do
		command -v "$c" && return 0
	done
	return 1
}

if ! chrome=$(find_chromium); then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		timeout 600 apt-get install -y chromium >/dev/null 2>&1 || true
	fi
	chrome=$(find_chromium) || { echo "chromium is not available: skipped"; exit 77; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/docket-browser.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export DOCKET_LEDGER="$work/ledger" NO_COLOR=1

fail() {
	echo "FAIL: $*"
	[ -f chrome.log ] && sed 's/^/    /' chrome.log | tail -40
	exit 1
}

"$docket" init >/dev/null || fail "init"
"$docket" record "$src/fixtures/sessions/demo-basic.jsonl" >/dev/null || fail "record"
"$docket" record "$src/fixtures/sessions/open-pending.jsonl" >/dev/null || fail "record"
"$docket" record "$src/fixtures/sessions/audit-risky.jsonl" >/dev/null || fail "record"
"$docket" keygen -o key >/dev/null && "$docket" checkpoint --key key >/dev/null || fail "checkpoint"
"$docket" report -o report.html >/dev/null || fail "report"

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking
       --disable-component-update --disable-sync --no-first-run
       --enable-logging=stderr --v=0)

timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
	--window-size=1280,2400 --screenshot="$work/report.png" "file://$work/report.html" \
	>/dev/null 2>chrome.log || fail "chromium exited with $?"
[ -s report.png ] || fail "no screenshot"
[ "$(head -c 8 report.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is not a PNG"

timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
	--dump-dom "file://$work/report.html" >dom.html 2>>chrome.log || fail "dump-dom"
grep -q "docket audit report" dom.html || fail "the DOM is not the report"
grep -q "<svg" dom.html || fail "the charts are missing"

# The first screen is the risk view: the attention card (never green while
# anything needs attention) and the risk lists come before everything else.
first_screen_checks() {
	local dom=$1
	python3 - "$dom" <<'PY' || fail "the first screen does not show the risk view"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
def at(s):
    i = dom.find(s)
    if i < 0:
        sys.exit("missing: " + s)
    return i
card = at('card bad attention')
risk = at('id="risk"')
for key in ("risky_sessions", "escalations", "risky_calls", "no_outcome", "denials"):
    if at('id="%s"' % key) < risk:
        sys.exit(key + " is not in the risk section")
glance = at("At a glance")
if not card < risk < glance < at("<h2>Sessions</h2>"):
    sys.exit("the risk view is not the first thing on the page")
section = dom[risk:glance]
for needed in ("approval_policy never, sandbox danger-full-access", "Need network access to push the branch",
               "example.com", "never touch ssh keys", "Sessions in risky modes", "Allowed calls in risk classes"):
    if needed not in section:
        sys.exit("the risk view lacks: " + needed)
PY
}
first_screen_checks dom.html

# The page's own messages: console output, script errors, blocked or failed loads.
if grep -E "CONSOLE|Uncaught|Failed to load resource|net::ERR_" chrome.log; then
	fail "the page logged errors"
fi
# the first screen itself, as a person sees it (1280x1000)
timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
	--window-size=1280,1000 --screenshot="$work/first.png" "file://$work/report.html" \
	>/dev/null 2>>chrome.log || fail "chromium exited with $?"
[ -s first.png ] || fail "no first-screen screenshot"

if [ -n "$shot_out" ]; then
	cp report.png "$shot_out" || fail "cannot copy the screenshot"
fi
echo "ok: report rendered, $(wc -c <report.png) byte screenshot, no page errors"
