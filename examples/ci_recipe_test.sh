#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Test example_ci_recipe: runs the run: steps of examples/policy-replay.yml
# verbatim, as GitHub Actions would on a pull request, in a scratch git
# repository holding a ledger and two commits of a policy (the base branch
# and the pull request's head). ci_steps (libfyaml) extracts the steps.
#
#   ci_recipe_test.sh DOCKET CI_STEPS SOURCE_ROOT
#
# What is not GitHub: `uses:` steps are skipped (the test did the checkout);
# `sudo` runs its command as the user (scripts/deps.sh then only checks that
# every package is installed); `meson` and `ninja` are stand-ins that check
# they were asked to build docket from DOCKET_SRC (meson setup BUILD SRC,
# ninja -C BUILD docket) and put the docket under test where the build
# would, so the run stays fast. Everything else (GITHUB_PATH,
# GITHUB_STEP_SUMMARY, GITHUB_BASE_REF, the job's env:, bash -eo pipefail,
# if: always()) is as on GitHub. Exit 77 when a needed package is missing.
set -euo pipefail

docket=$(realpath "$1") ci_steps=$(realpath "$2") src=$(realpath "$3")
workflow=$src/examples/policy-replay.yml
fixtures=$src/fixtures/replay
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fails=0

check() {  # check DESCRIPTION COMMAND...
	if "${@:2}"; then
		echo "ok: $1"
	else
		echo "FAIL: $1" >&2
		fails=$((fails + 1))
	fi
}

command -v git >/dev/null || { echo "skip: git is missing"; exit 77; }
"$src/scripts/deps.sh" --quiet 2>/dev/null || { echo "skip: scripts/deps.sh reports missing packages"; exit 77; }

# ---- the docs show this very file ----
awk '/^## In CI/ { ci = 1 } ci && /^```yaml$/ { on = 1; next } on && /^```$/ { exit } on' \
	"$src/docs/replay.md" > "$scratch/docs.yml"
check "docs/replay.md shows examples/policy-replay.yml verbatim" cmp -s "$scratch/docs.yml" "$workflow"

# ---- stand-ins ----
mkdir -p "$scratch/bin"
cat > "$scratch/bin/sudo" <<'SH'
#!/usr/bin/env bash
echo "sudo $*" >> "$STUB_LOG"
exec "$@"
SH
cat > "$scratch/bin/meson" <<SH
#!/usr/bin/env bash
echo "meson \$*" >> "\$STUB_LOG"
[ "\$1" = setup ] && [ \$# -ge 3 ] || { echo "meson stand-in: expected setup BUILD SRC" >&2; exit 1; }
grep -q "^project('docket'" "\$3/meson.build" || { echo "meson stand-in: \$3 is not docket's source" >&2; exit 1; }
mkdir -p "\$2/app/cli" && ln -s "$docket" "\$2/app/cli/docket"
SH
cat > "$scratch/bin/ninja" <<'SH'
#!/usr/bin/env bash
echo "ninja $*" >> "$STUB_LOG"
[ "$1" = -C ] && [ "$3" = docket ] && [ -x "$2/app/cli/docket" ] ||
	{ echo "ninja stand-in: expected -C BUILD docket in a set-up BUILD" >&2; exit 1; }
SH
chmod +x "$scratch/bin"/*

# ---- the repository of the pull request ----
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev \
	GIT_COMMITTER_EMAIL=dev@example.com GIT_CONFIG_NOSYSTEM=1 HOME=$scratch
repo=$scratch/repo
git init -q -b main "$repo"
ln -s "$src" "$repo/docket"              # DOCKET_SRC: the submodule
mkdir -p "$repo/policy"
"$docket" -L "$repo/.docket" init >/dev/null
"$docket" -L "$repo/.docket" record "$fixtures/sessions.jsonl" >/dev/null
cp "$fixtures/base.yaml" "$repo/policy/agent.yaml"
git -C "$repo" add -A && git -C "$repo" commit -q -m "policy and sessions"
git -C "$repo" update-ref refs/remotes/origin/main HEAD
git -C "$repo" checkout -q -b loosen
cp "$fixtures/loose.yaml" "$repo/policy/agent.yaml"
git -C "$repo" commit -q -am "policy: looser"
git -C "$repo" checkout -q -b tighten main
cp "$fixtures/strict.yaml" "$repo/policy/agent.yaml"
git -C "$repo" commit -q -am "policy: stricter"

# ---- the steps ----
mkdir "$scratch/steps"
"$ci_steps" "$workflow" replay "$scratch/steps"
check "the first step checks the repository out" grep -qx 'actions/checkout@v4' "$scratch/steps/01.uses"

# run_job BRANCH: runs every step on BRANCH; prints "NN rc" per run: step
run_job() {
	local run=$scratch/run-$1 failed=0 rc step n
	mkdir -p "$run/tmp"
	: > "$run/path" && : > "$run/summary" && : > "$run/stubs"
	git -C "$repo" checkout -q "$1"
	for step in "$scratch"/steps/*.name; do
		n=$(basename "$step" .name)
		if [ -f "$scratch/steps/$n.uses" ]; then
			continue
		fi
		if [ $failed -ne 0 ] && [ "$(cat "$scratch/steps/$n.if")" != "always()" ]; then
			echo "$n skipped"
			continue
		fi
		rc=0
		(
			cd "$repo"
			set -a
			. "$scratch/steps/env"
			. "$scratch/steps/$n.env"
			set +a
			export GITHUB_ACTIONS=true CI=true GITHUB_BASE_REF=main GITHUB_HEAD_REF=$1 \
				GITHUB_PATH=$run/path GITHUB_STEP_SUMMARY=$run/summary RUNNER_TEMP=$run/tmp \
				STUB_LOG=$run/stubs
			PATH=$(tac "$run/path" | tr '\n' ':')$scratch/bin:$PATH
			exec bash --noprofile --norc -eo pipefail "$scratch/steps/$n.sh"
		) > "$run/$n.out" 2>&1 || rc=$?
		echo "$n $rc"
		[ $rc -eq 0 ] || failed=1
	done
}

# a pull request that loosens: the gate step fails, the summary says why
out=$(run_job loosen)
check "loosen: deps, build and the summary pass, the gate fails with 1" \
	test "$out" = "$(printf '02 0\n03 0\n04 0\n05 1')"
check "loosen: deps.sh ran through sudo from DOCKET_SRC" grep -qx 'sudo docket/scripts/deps.sh' "$scratch/run-loosen/stubs"
check "loosen: meson set docket up from DOCKET_SRC" \
	grep -qx "meson setup $scratch/run-loosen/tmp/docket-build docket -Dtests=disabled" "$scratch/run-loosen/stubs"
check "loosen: the job summary is the markdown report" grep -q '^## docket replay' "$scratch/run-loosen/summary"
check "loosen: it compares the base with the head" \
	grep -qF 'against <code>git:HEAD:policy/agent.yaml</code> (baseline: <code>git:origin/main:policy/agent.yaml</code>' \
	"$scratch/run-loosen/summary"
check "loosen: the summary counts loosened calls" grep -qE '^\| \*\*loosened\*\* \| [1-9]' "$scratch/run-loosen/summary"
check "loosen: the JUnit report has failures" grep -q '<failure type="loosened"' "$repo/replay.xml"

# a pull request that tightens: every step passes
out=$(run_job tighten)
check "tighten: every step passes" test "$out" = "$(printf '02 0\n03 0\n04 0\n05 0')"
check "tighten: the summary counts no loosened call" grep -qE '^\| \*\*loosened\*\* \| 0 \|' "$scratch/run-tighten/summary"
check "tighten: and some tightened ones" grep -qE '^\| tightened \| [1-9]' "$scratch/run-tighten/summary"

# ---- ci_steps refuses what it cannot run as GitHub would ----
refuses() {  # refuses WHAT YAML
	printf '%s\n' "$2" > "$scratch/bad.yml"
	rm -rf "$scratch/bad" && mkdir "$scratch/bad"
	! "$ci_steps" "$scratch/bad.yml" j "$scratch/bad" 2>/dev/null
}
check "ci_steps refuses an expression in run:" refuses expr \
	'jobs: {j: {defaults: {run: {shell: bash}}, steps: [{run: "echo ${{ github.base_ref }}"}]}}'
check "ci_steps refuses a shell other than bash" refuses shell 'jobs: {j: {steps: [{run: "true", shell: pwsh}]}}'
check "ci_steps refuses a step with neither run: nor uses:" refuses step \
	'jobs: {j: {defaults: {run: {shell: bash}}, steps: [{name: x}]}}'
check "ci_steps refuses a missing job" refuses job 'jobs: {k: {steps: [{uses: a/b@v1}]}}'
check "ci_steps refuses text that is not YAML" refuses yaml 'jobs: {j: [}'

if [ $fails -ne 0 ]; then
	for f in "$scratch"/run-*/*.out; do echo "--- $f"; cat "$f"; done >&2
	exit 1
fi
