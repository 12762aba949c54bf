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

# The real transcripts (../shared/corpus, when present): the first screen
# names the risky sessions, the escalations and the allowed risky calls,
# and shows no 0-ms wait the transcripts never recorded.
corpus=$src/../shared/corpus
if [ -d "$corpus" ]; then
	"$docket" -L real init >/dev/null || fail "init real"
	"$docket" -L real import codex "$corpus"/codex/*.jsonl >/dev/null 2>&1
	"$docket" -L real import claude "$corpus"/claude/*.jsonl >/dev/null 2>&1
	"$docket" -L real report -o real.html >/dev/null || fail "report of the corpus"
	timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
		--dump-dom "file://$work/real.html" >real-dom.html 2>>chrome.log || fail "dump-dom of the corpus report"
	python3 - real-dom.html <<'PY' || fail "the corpus report's first screen"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
risk, glance = dom.index('id="risk"'), dom.index("At a glance")
if "card bad attention" not in dom[:risk]:
    sys.exit("the attention card is not red")
section = dom[risk:glance]
def rows(key):
    start = section.index('id="%s"' % key)
    return section[start:section.index("</div>", start)].count("<tr>") - 1
for needed in ("approval_policy never, sandbox danger-full-access", "permissions.defaultMode bypassPermissions",
               "git push -u origin main", "Need network access to push"):
    if needed not in section:
        sys.exit("the risk view lacks: " + needed)
if rows("risky_sessions") < 5 or rows("escalations") < 44 or rows("risky_calls") < 1:
    sys.exit("too few rows: %d risky sessions, %d escalations, %d risky calls" %
             (rows("risky_sessions"), rows("escalations"), rows("risky_calls")))
hosts = re.findall(r'<td>([a-z0-9.-]+\.[a-z]{2,})</td><td>allowed', section)
if not hosts:
    sys.exit("no host named among the allowed risky calls")
# the transcripts never say when a question was asked: no 0-ms waits
if re.search(r'<div class="n">0 ms</div>', dom) or re.search(r'<td class="num">0 ms</td>', dom):
    sys.exit("a 0 ms wait is shown")
print("corpus: %d risky sessions, %d escalations, %d risky calls (hosts %s)" %
      (rows("risky_sessions"), rows("escalations"), rows("risky_calls"), ", ".join(sorted(set(hosts))[:3])))
PY
fi

# The report at scale: a large ledger (report_scale.py; REPORT_BROWSER_SCALE
# is "SESSIONS CALLS_PER_SESSION", default "1000 100": 100,000 calls, whose
# risky calls fill 40 linked pages) opens, and a risky call from deep in the
# ledger (the last one `docket audit --json` lists) is reachable: the report
# links the page that holds it, and that page opens with it in its table.
read -r big_sessions big_per <<<"${REPORT_BROWSER_SCALE:-1000 100}"
mkdir big || fail "mkdir"
python3 "$src/tests/cli/report_scale.py" "$docket" "$big_sessions" "$big_per" 600 --keep "$work/big" >big.log 2>&1 ||
	fail "report_scale: $(cat big.log)"
timeout 300 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
	--dump-dom "file://$work/big/r.html" >big-dom.html 2>>chrome.log || fail "dump-dom of the large report"
first_screen_big() {
	python3 - "$@" <<'PY'
import json, re, sys
dom, findings = open(sys.argv[1], encoding="utf-8").read(), json.load(open(sys.argv[2]))
if "docket audit report" not in dom or dom.find("card bad attention") > dom.find('id="risk"'):
    sys.exit("the large report does not open on its risk view")
deep = findings["risky_calls"][-1]
start = dom.index('id="risky_calls"')
links = re.findall(r'<a href="([^"]+)">', dom[start:dom.index("</div>", start)])
if not links:
    sys.exit("the risky calls of the large report link no page")
if '<small>shell · %s</small>' % deep["invocation"] in dom[start:] and deep["session"] in dom[start:]:
    sys.exit("the deepest risky call is on the first page: the test proves nothing")
print(links[-1], deep["session"], deep["invocation"])
PY
}
"$docket" -L "$work/big/L" audit --json >big-findings.json || fail "audit --json of the large ledger"
read -r page deep_session deep_inv < <(first_screen_big big-dom.html big-findings.json) ||
	fail "the large report: no page to follow"
[ -n "$page" ] || fail "the large report's first screen"
timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$work")" \
	--dump-dom "file://$work/big/$page" >page-dom.html 2>>chrome.log || fail "dump-dom of $page"
python3 - page-dom.html "$deep_session" "$deep_inv" <<'PY' || fail "the deep risky call is not on the page the report links"
import re, sys
dom, session, inv = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2], sys.argv[3]
rows = re.findall(r'<tr><td class="t">[^<]*</td><td class="call">([^<]*)</td>.*?<small>[^<]*? · ([^<]*)</small>', dom)
if (session, inv) not in rows:
    sys.exit("%s %s not among the %d rows of the page" % (session, inv, len(rows)))
if "the report</a>" not in dom:
    sys.exit("the page does not link back to the report")
PY
if grep -E "CONSOLE|Uncaught|Failed to load resource|net::ERR_" chrome.log; then
	fail "the large report logged errors"
fi

if [ -n "$shot_out" ]; then
	cp report.png "$shot_out" || fail "cannot copy the screenshot"
fi
echo "ok: report rendered, $(wc -c <report.png) byte screenshot, no page errors; $(cat big.log);" \
	"the large report opens and links $page, which holds the deep risky call $deep_session $deep_inv"
