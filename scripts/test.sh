#!/usr/bin/env bash
# One command: set everything up for the tests (incl. Debian's chromium) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
echo "test: ruff"
.venv/bin/ruff check --output-format concise .
echo "test: pytest (whole suite: unit, AppTest, embedded model, browser)"
# Isolated database and cache dirs so the suite never touches the user's data
export CHECKEVAL_DB="$(mktemp -d)/never-used.db"
set +e
.venv/bin/python -m pytest -q -p no:cacheprovider --timeout 900 "$@"
rc=$?
set -e
if [[ $rc == 5 ]]; then echo "test: no tests were collected" >&2; exit 1; fi
exit $rc
