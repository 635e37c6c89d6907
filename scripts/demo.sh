#!/usr/bin/env bash
# One command: set everything up, load the bundled demo, start the app on http://localhost:8501
# (only this machine can reach it; ADDRESS=0.0.0.0 for a team behind a login proxy — see the
# README, "Deploying for a team"). Runs from the repository root so Streamlit reads
# .streamlit/config.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/checkeval demo
exec .venv/bin/python -m studio_ui.serve --server.port "${PORT:-8501}" \
  --server.address "${ADDRESS:-127.0.0.1}" --server.headless true \
  --browser.gatherUsageStats false
