# policy test runs against any source: Codex rules, Claude settings, and a
# policy at a git revision (the same tests pass at HEAD~1 and fail at HEAD)
cp "$FIXTURES/policies/default.rules" "$FIXTURES/policies/settings.json" .
cat > t.yaml <<'T'
tests:
  - {command: git push origin main, expect: approval_required}
  - {command: rm -rf x, expect: denied}
T
docket policy test codex:default.rules t.yaml || exit
docket policy test claude:settings.json t.yaml
echo "exit $?"
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev \
	GIT_COMMITTER_EMAIL=dev@example.com GIT_CONFIG_NOSYSTEM=1 HOME=$PWD
git init -q -b main repo
cp "$FIXTURES/policies/authoring.yaml" repo/p.yaml && git -C repo add p.yaml && git -C repo commit -qm one
sed -i 's/decision: deny$/decision: ask/' repo/p.yaml && git -C repo commit -qam two
cd repo
docket policy test git:HEAD~1:p.yaml ../t.yaml || exit
docket policy test git:HEAD:p.yaml ../t.yaml
