# The two commands: `make demo` and `make test`. Both set up what is missing first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help setup program build test demo bench clean

help:
	@echo "make demo   - the whole story on embedded defaults (PostgreSQL + localnet started for you)"
	@echo "make test   - every test (installs what is missing, builds the program)"
	@echo "make bench  - benchmarks (ratios measured side by side)"
	@echo "make program - build target/deploy/oncepay.so with the Debian-only SBF toolchain"

setup:
	@scripts/setup.sh

program: setup
	@toolchain/sbf/build.sh

build: setup
	@npx tsc -p tsconfig.json

test: program build
	@scripts/test.sh

demo: program build
	@node bin/oncepay demo

bench: program build
	@scripts/bench.sh

clean:
	rm -rf dist target .oncepay toolchain/sbf/build
