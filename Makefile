# The two commands: `make demo` and `make test`. Both set up what is missing first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help setup lint program build test demo bench clean validator test-validator sim sim-mutants chaos ha fleet

help:
	@echo "make demo   - the whole story on embedded defaults (PostgreSQL + localnet started for you)"
	@echo "make test   - make lint, then every test (installs what is missing, builds the program)"
	@echo "make lint   - formatting and lint: prettier, eslint, cargo fmt, cargo clippy (fixes: npx prettier --write ., cargo fmt)"
	@echo "make bench  - benchmarks (ratios measured side by side)"
	@echo "make sim    - the seeded simulation's model layer (SEED=, SIM_PATH= replay a failure; RUNS=, MUTANT=)"
	@echo "make sim-mutants - known bugs patched into the simulation's cores: how many schedules each takes to be caught"
	@echo "make chaos SEEDS=1-5 - seeded chaos runs of the real processes (WINDOW_MS=, FAULTS=, VERBOSE=1)"
	@echo "make fleet  - the fleet bench: N = 1, 2, 4 APIs and workers on a pg_auto_failover formation, then chaos (~10 min)"
	@echo "make ha     - install pg_auto_failover and start a local formation (primary + synchronous standby); prints DATABASE_URL"
	@echo "make program - build target/deploy/oncepay.so with the Debian-only SBF toolchain"
	@echo "make validator - install solana-test-validator 3.1.4 from crates.io (~30 min, once; not part of make test)"
	@echo "make test-validator - the end-to-end suites on a real solana-test-validator (started and stopped here)"

setup:
	@scripts/setup.sh

# Also Anchor's layout: the IDL (built from the source by idl/gen, checked by a test) in target/idl and target/types,
# where `anchor test` and Anchor tooling look for it.
program: setup
	@toolchain/sbf/build.sh
	@mkdir -p target/idl target/types && cp idl/oncepay.json target/idl/oncepay.json && cp idl/oncepay.ts target/types/oncepay.ts

build: setup
	@npx tsc -p tsconfig.json

lint: setup
	@scripts/lint.sh

# pg_auto_failover's Debian packages for `oncepay db ha` (see README, Production): installed by setup only when asked.
ha: export ONCEPAY_HA := 1
ha: setup build
	@node bin/oncepay db ha start

fleet: export ONCEPAY_HA := 1
fleet: program build
	@node -r ts-node/register/transpile-only bench/fleet.ts

# lint first: a tree that is not formatted or linted fails here, before the (long) tests.
# ONCEPAY_HA=1: setup also installs pg_auto_failover, for the failover suite (tests/ha); ONCEPAY_BROWSER=1:
# Debian's chromium, for the browser suites (tests/browser).
test: export ONCEPAY_HA := 1
test: export ONCEPAY_BROWSER := 1
test: lint program build
	@scripts/test.sh

demo: program build
	@node bin/oncepay demo

bench: program build
	@scripts/bench.sh

# The seeded simulation (sim/README.md). A failure prints the SEED and SIM_PATH that replay it.
SIM_ARGS = $(if $(SEED),--seed $(SEED)) $(if $(SIM_PATH),--path $(SIM_PATH)) $(if $(RUNS),--runs $(RUNS))
sim: setup
	@node -r ts-node/register/transpile-only sim/run.ts $(SIM_ARGS) $(if $(MUTANT),--mutant $(MUTANT)) $(if $(TRACE),--trace)

sim-mutants: setup
	@node -r ts-node/register/transpile-only sim/run.ts --mutants $(SIM_ARGS)

# The simulation's system layer: the real processes (from dist/, hence build) against their own PostgreSQL server
# and a localnet, one run per seed.
chaos: program build
	@node -r ts-node/register/transpile-only sim/chaos/run.ts --seeds $(or $(SEEDS),1-3) $(if $(WINDOW_MS),--window-ms $(WINDOW_MS)) $(if $(FAULTS),--faults $(FAULTS)) $(if $(VERBOSE),--verbose)

validator:
	@scripts/validator.sh

# The end-to-end suites on solana-test-validator (make validator installs it); not part of make test.
test-validator: setup program
	@scripts/test-validator.sh

clean:
	rm -rf dist target .oncepay toolchain/sbf/build
