# --policy-history names its baseline as the policy at the range's start
# (A of A..B), not "at A..B"
seed replay/sessions.jsonl
export GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev \
	GIT_COMMITTER_EMAIL=dev@example.com GIT_CONFIG_NOSYSTEM=1 HOME=$PWD
git init -q -b main repo
cp "$FIXTURES/replay/base.yaml" repo/policy.yaml && git -C repo add policy.yaml && git -C repo commit -q -m base
cp "$FIXTURES/replay/strict.yaml" repo/policy.yaml && git -C repo commit -q -am stricter
(cd repo && docket -L ../ledger replay --policy-history policy.yaml --range HEAD~1..HEAD) | grep '^baseline'
(cd repo && docket -L ../ledger replay --policy-history policy.yaml --range HEAD~1..HEAD --format markdown) | grep '^Replayed'
