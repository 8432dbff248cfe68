#!/usr/bin/env bash
# Posts the plan summary on a pull request (CI, with GH_TOKEN and GITHUB_REPOSITORY set), editing its own
# earlier comment, found by the marker on the summary's first line: one comment per PR, kept current.
#
#   tools/plan/post-comment.sh <pr number> <summary.md>
set -euo pipefail
pr=${1:?pull request number}
body=${2:?summary file}
repo=${GITHUB_REPOSITORY:?}
marker='<!-- pulp-plan-summary'

# GitHub refuses comments over 65536 characters; the summary is short, its "other changes" list may not be.
if [[ $(wc -c <"$body") -gt 60000 ]]; then
  head -c 60000 "$body" >"$body.cut" && printf '\n\n(cut at 60000 characters: the whole report is in the job summary)\n' >>"$body.cut"
  body="$body.cut"
fi

id=$(gh api --paginate "repos/$repo/issues/$pr/comments" \
  --jq ".[] | select(.user.type == \"Bot\" and (.body | startswith(\"$marker\"))) | .id" | tail -n 1)
if [[ -n "$id" ]]; then
  gh api --method PATCH "repos/$repo/issues/comments/$id" -F "body=@$body" >/dev/null
  echo "plan summary: updated comment $id on #$pr"
else
  gh api --method POST "repos/$repo/issues/$pr/comments" -F "body=@$body" >/dev/null
  echo "plan summary: commented on #$pr"
fi
