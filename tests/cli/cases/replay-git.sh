# git policy sources (libgit2, no checkout): a policy at a revision, in a
# bare clone, its history over a range with the first commit that changed
# each call, and a malformed policy at a revision (exit 2 naming it)
seed replay/sessions.jsonl
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev \
	GIT_COMMITTER_EMAIL=dev@example.com GIT_CONFIG_NOSYSTEM=1 HOME=$PWD
commit() {
	GIT_AUTHOR_DATE="2025-04-0$1T12:00:00Z" GIT_COMMITTER_DATE="2025-04-0$1T12:00:00Z" \
		git -C repo commit -q -m "$2"
}
git init -q -b main repo
cp "$FIXTURES/replay/base.yaml" repo/policy.yaml && git -C repo add policy.yaml && commit 1 "policy: base"
echo "# docs" > repo/README && git -C repo add README && commit 2 "docs: readme"
cp "$FIXTURES/replay/strict.yaml" repo/policy.yaml && git -C repo add policy.yaml && commit 3 "policy: stricter"
cp "$FIXTURES/replay/loose.yaml" repo/policy.yaml && git -C repo add policy.yaml && commit 4 "policy: looser"
git clone -q --bare repo bare.git
echo '$ docket replay --policy git:HEAD~1:policy.yaml --repo bare.git --session s-codex'
docket replay --policy git:HEAD~1:policy.yaml --repo bare.git --session s-codex || exit
echo '$ docket replay --policy-history policy.yaml --range HEAD~3..HEAD --format json (in repo/)'
(cd repo && docket -L ../ledger replay --policy-history policy.yaml --range HEAD~3..HEAD --format json) | \
	grep -E '"(commits|totals)"|"invocation":"c[24]"' | sed -E 's/"args":\{[^}]*\},//'
cp "$FIXTURES/replay/malformed.yaml" repo/policy.yaml && git -C repo add policy.yaml && commit 5 "policy: typo"
echo '$ docket replay --policy git:HEAD:policy.yaml --repo repo'
docket replay --policy git:HEAD:policy.yaml --repo repo
