#!/usr/bin/env bash
# One command: set everything up, load the bundled demo, start the app on http://localhost:8501
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/checkeval demo
exec .venv/bin/python -m studio_ui.serve --server.port "${PORT:-8501}" --server.headless true \
  --browser.gatherUsageStats false
