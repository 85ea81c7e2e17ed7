#!/usr/bin/env bash
# What CI checks, in one place (called by `make test`, which `.ci/run` calls):
#   1. ruff over the package, tests and notebooks;
#   2. one pytest run that holds
#      - the unit tests (tests/),
#      - the papermill smoke run of every notebook with its params/ file (tests/test_notebooks.py),
#      - nbval over notebooks/: each notebook re-executed and compared with its committed outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${VENV:-.venv}/bin"

echo "== ruff"
"$BIN/ruff" check lib tests notebooks ci

echo "== pytest: unit tests, papermill smoke run, nbval"
"$BIN/python" -m pytest tests notebooks \
  --nbval --nbval-current-env \
  --nbval-sanitize-with ci/nbval_sanitize.cfg \
  --nbval-kernel-startup-timeout 180 --nbval-cell-timeout 600 \
  "$@"
