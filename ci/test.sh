#!/usr/bin/env bash
# What CI checks, in one place (called by `make test`, which `.ci/run` calls):
#   1. ruff over the package, tests and notebooks; ruff format --check over the package and tests;
#      lint-imports (the rooms of lib/storagelab import only the rooms below them: pyproject.toml);
#      mypy over the modules every simulated IO crosses ([tool.mypy] files in pyproject.toml), which
#      make native has compiled (storagelab.kernel.native) if this machine has a C compiler;
#   2. one pytest run, on both cores (pytest-xdist; a notebook's cells stay on one worker), that holds
#      - the unit tests (tests/), including the report pipeline on a small project with other parameters
#        and the re-run of the committed calibration (marked slow),
#      - nbval over notebooks/: each notebook executed once and compared with its committed outputs.
#        A cell may run 30 minutes: notebook 19's comparison with its parameter draws takes about 7 min
#        alone on two cores and over 10 min beside the other worker's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${VENV:-.venv}/bin"

echo "== ruff"
"$BIN/ruff" check lib tests notebooks ci
"$BIN/ruff" format --check lib tests

echo "== import layers"
"$BIN/lint-imports"

echo "== mypy: the per-IO modules"
"$BIN/mypy"

echo "== the per-IO modules (make native compiles them when a C compiler is here)"
"$BIN/storagelab" compile --status

echo "== pytest: unit tests and nbval, on both cores"
"$BIN/python" -m pytest tests notebooks \
  --nbval --nbval-current-env \
  --nbval-sanitize-with ci/nbval_sanitize.cfg \
  --nbval-kernel-startup-timeout 180 --nbval-cell-timeout 1800 \
  -n "${PYTEST_WORKERS:-2}" --dist loadfile \
  --durations=25 \
  "$@"
