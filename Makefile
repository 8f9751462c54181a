# The two commands: `make demo` and `make test`. Both set up what is missing first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help setup lint program build test demo bench clean

help:
	@echo "make demo   - the whole story on embedded defaults (PostgreSQL + localnet started for you)"
	@echo "make test   - make lint, then every test (installs what is missing, builds the program)"
	@echo "make lint   - formatting and lint: prettier, eslint, cargo fmt, cargo clippy (fixes: npx prettier --write ., cargo fmt)"
	@echo "make bench  - benchmarks (ratios measured side by side)"
	@echo "make program - build target/deploy/oncepay.so with the Debian-only SBF toolchain"

setup:
	@scripts/setup.sh

program: setup
	@toolchain/sbf/build.sh

build: setup
	@npx tsc -p tsconfig.json

lint: setup
	@scripts/lint.sh

# lint first: a tree that is not formatted or linted fails here, before the (long) tests.
test: lint program build
	@scripts/test.sh

demo: program build
	@node bin/oncepay demo

bench: program build
	@scripts/bench.sh

clean:
	rm -rf dist target .oncepay toolchain/sbf/build
