# storagelab — the two commands a user needs:
#   make report   build the environment if needed, execute every notebook, write reports/index.html
#   make test     build the environment if needed, run unit tests, nbval and the papermill smoke run
# Other targets: make lab, make lock, make refresh, make calibration, make measured, make bench, make lint,
# make native (the compiled per-IO modules; the targets above build them when their sources change).

PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: report test lab lint lock refresh calibration measured bench env native clean

env: $(STAMP)

# The environment is rebuilt whenever the lock or the project metadata changes.
$(STAMP): requirements.lock pyproject.toml ci/jupyterlab-overrides.json ci/jupyter_server_config.json
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "storagelab needs Python 3.11, got " + sys.version.split()[0]' \
	  || { echo "Set PYTHON=/path/to/python3.11 (make PYTHON=...)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip==26.3"
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (storagelab)" >/dev/null
	# JupyterLab without the news pop-up or update checks (this machine may have no network, and a
	# workbench should open on the notebooks)
	mkdir -p $(VENV)/share/jupyter/lab/settings && cp ci/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	# Kernels started by Jupyter talk over IPC sockets, not TCP: no open ports, and no "running over TCP
	# without encryption" warning in the terminal on every kernel start
	mkdir -p $(VENV)/etc/jupyter && cp ci/jupyter_server_config.json $(VENV)/etc/jupyter/jupyter_server_config.json
	touch $(STAMP)

# The per-IO modules compiled by mypyc (storagelab.kernel.native), rebuilt when their sources have changed:
# a no-op when up to date, a message and pure Python on a machine without a C compiler.
native: $(STAMP)
	$(BIN)/storagelab compile --if-stale

report: native
	$(BIN)/storagelab report

test: native
	bash ci/test.sh

lab: native
	$(BIN)/jupyter lab notebooks/

lint: $(STAMP)
	$(BIN)/ruff check lib tests notebooks
	$(BIN)/ruff format --check lib tests
	$(BIN)/lint-imports
	$(BIN)/mypy

# Re-execute every notebook in place with its default parameters and strip volatile metadata,
# so that the committed outputs are the ones nbval compares against.
refresh: native
	$(BIN)/storagelab refresh

# Re-run the committed quick calibration with its intervals (the run notebooks 10-16, 18 and 19 and the README show;
# the longest target here, some twenty minutes on two cores), then rerun the envelope and regenerate the README's
# tables from both. Commit notebooks/calibration-quick.csv, envelope-quick.csv and README.md together.
calibration: native
	$(BIN)/storagelab calibrate --quick --uncertainty 16 --out notebooks/calibration-quick.csv > /dev/null
	$(BIN)/python ci/update_readme_calibration.py --envelope

# Re-fit both days' measurements of this machine's disk, check each day's model on both days' held-back and
# blind validation points (issue 71's four checks), and regenerate the README's figures from the check
# tables. Commit measurements/ and README.md together.
measured: native
	$(BIN)/storagelab fit measurements/vda-ext4 --check-on measurements/vda-ext4-validation > /dev/null
	$(BIN)/storagelab fit measurements/vda-ext4 --check-on measurements/vda-ext4-day2 --held-back-only --check-name check-by-vda-ext4.csv > /dev/null
	$(BIN)/storagelab fit measurements/vda-ext4 --check-on measurements/vda-ext4-validation-day2 --check-name check-by-vda-ext4.csv > /dev/null
	$(BIN)/storagelab fit measurements/vda-ext4-day2 --check-on measurements/vda-ext4-validation-day2 > /dev/null
	$(BIN)/storagelab fit measurements/vda-ext4-day2 --check-on measurements/vda-ext4 --held-back-only --check-name check-by-vda-ext4-day2.csv > /dev/null
	$(BIN)/storagelab fit measurements/vda-ext4-day2 --check-on measurements/vda-ext4-validation --check-name check-by-vda-ext4-day2.csv > /dev/null
	$(BIN)/python ci/update_readme_measured.py

# Two consecutive kernel benchmark runs (a few minutes), then the README's table from them. Commit
# benchmarks/ and README.md together.
bench: native
	$(BIN)/storagelab bench --out benchmarks/bench-1.csv > /dev/null
	$(BIN)/storagelab bench --out benchmarks/bench-2.csv > /dev/null
	$(BIN)/python ci/update_readme_bench.py

# Re-resolve the pins (needs uv: pip install uv). Commit requirements.lock and environment.yml together.
lock:
	uv pip compile pyproject.toml --extra dev --python-version 3.11 \
	  --python-platform x86_64-unknown-linux-gnu --generate-hashes -o requirements.lock
	$(PYTHON) ci/make_environment_yml.py

clean:
	rm -rf $(VENV) reports .pytest_cache
