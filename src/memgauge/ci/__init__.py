"""What memgauge's CI integrations run beside the CLI: the GitHub Action's sticky pull-request
comment (`python -m memgauge.ci.github`). The Action itself is `action.yml` at the repository's
root, its shell steps `scripts/ci/github-action.sh`; docs/ci.md has the GitLab recipe."""
