# The two commands the README promises (both work on a fresh Debian machine
# with Go; `make setup` installs the system packages they need, as root):
#   make mini   build repro and run the SimCSE experiment in the mini profile
#   make test   vet, unit tests, every experiment's `ci` profile and `repro check` against results/
# and, longer:
#   make reproduce   every experiment's `mini` profile, checked against results/
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
REPRO_DATA_DIR ?= $(abspath ../shared/data)
export REPRO_DATA_DIR

.PHONY: setup build mini test unit experiments reproduce check

setup:
	bash scripts/setup.sh

build:
	go build -o repro ./cmd/repro

mini: setup build
	./repro run experiments/simcse.hcl --profile mini

unit:
	go vet ./...
	go test -count=1 ./...

experiments: build
	bash scripts/experiments.sh ci

reproduce: setup build
	bash scripts/experiments.sh mini

test: setup unit experiments
