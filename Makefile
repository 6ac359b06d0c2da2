# Set-up is part of every target: the virtual environment is created on first use and
# refreshed when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# psds_eval, the PSDS tests' oracle, needs numpy<2 and pandas<3: an environment of its own
ORACLE := .venv-oracle
ORACLE_STAMP := $(ORACLE)/.installed

.PHONY: train demo check test test-slow lint bench reproduce clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[train,test]'
	$(BIN)/pip install --quiet --no-deps rtamt==0.4.10  # see pyproject.toml
	touch $(STAMP)

$(ORACLE_STAMP): tests/oracles/requirements.txt
	$(PYTHON) -m venv $(ORACLE)
	$(ORACLE)/bin/pip install --quiet -r tests/oracles/requirements.txt
	touch $(ORACLE_STAMP)

train: $(STAMP)            ## the main job: train the dilated CNN, guard vectors every epoch
	$(BIN)/python train.py model=dilated_cnn $(ARGS)

demo: $(STAMP)             ## audit the shipped example, print the guard vector
	$(BIN)/sedcontract demo

# tiers, by folder: tests/unit (the evaluation half, no torch/Lightning/Hydra), tests/train
# (composes Hydra or fits), tests/system (fresh installs, the browser, the psds_eval
# environment, benchmark smoke runs); pytest-xdist spreads each over the machine's cores
check: $(STAMP)            ## lint + the unit tier (about a minute)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/python -m pytest tests/unit -m "not slow" -n auto --dist worksteal

test: $(STAMP) $(ORACLE_STAMP)  ## lint + every tier but the slow checks (CI runs exactly this)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/python -m pytest -m "not slow" -n auto --dist worksteal

test-slow: $(STAMP) $(ORACLE_STAMP)      ## the long checks (larger proof bounds, long fuzzing)
	$(BIN)/python -m pytest -m slow -n auto --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts

reproduce: $(STAMP)        ## the controlled track end to end: data, every detector, report (about 6 min)
	$(BIN)/python scripts/reproduce.py $(ARGS)

# every script records its headline rows in one file (SEDCONTRACT_BENCH_ROWS); the summary
# table of them ends the run, and a failing script fails it
bench: $(STAMP)            ## speed side by side with the reference tools
	rows=$$(mktemp); export SEDCONTRACT_BENCH_ROWS="$$rows"; \
	$(BIN)/python benchmarks/frame_monitor.py && \
	$(BIN)/python -W ignore benchmarks/audit_vector.py && \
	$(BIN)/python -W ignore benchmarks/standard_scores.py && \
	$(BIN)/python benchmarks/build_controlled.py && \
	$(BIN)/python -W ignore benchmarks/train_throughput.py && \
	$(BIN)/python -W ignore benchmarks/reproducible_cost.py && \
	$(BIN)/python benchmarks/contract_loss.py && \
	$(BIN)/python -W ignore benchmarks/hostile_memory.py && \
	$(BIN)/python -W ignore benchmarks/corpus_scale.py && \
	$(BIN)/python -W ignore benchmarks/audioset_scale.py --dense-slice 30 && \
	$(BIN)/python benchmarks/encoders.py && \
	$(BIN)/python -W ignore benchmarks/score_folders.py && \
	$(BIN)/python benchmarks/psds_points.py && \
	$(BIN)/python -W ignore benchmarks/report_scale.py && \
	$(BIN)/python -W ignore benchmarks/curves_scale.py --audioset 2000 && \
	$(BIN)/python -W ignore benchmarks/participant_loop.py && \
	$(BIN)/python benchmarks/startup.py && \
	$(BIN)/python benchmarks/light_install.py && \
	$(BIN)/python -W ignore benchmarks/device.py && \
	$(BIN)/python benchmarks/summary.py "$$rows"; \
	status=$$?; rm -f "$$rows"; exit $$status

clean:
	rm -rf $(VENV) $(ORACLE) .pytest_cache .ruff_cache .hypothesis
