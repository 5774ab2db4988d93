# The two commands the README promises (both work on a fresh Debian machine
# with Go on the PATH; `make setup` installs the system packages they need, as
# root, and `make mini` runs it first; `make test` installs nothing):
#   make mini   build repro and run the GenSE experiment in the mini profile
#               (the mini T5's pretraining imported from mirror/; NO_MIRROR=1
#               pretrains it here first)
#   make test   vet, unit tests, every experiment's `ci` profile and `repro check` against results/
# and, longer:
#   make reproduce   every experiment's `mini` profile, checked against results/
#                    (NO_MIRROR=1: nothing imported from mirror/)
SHELL := /bin/bash
REPRO_DATA_DIR ?= $(abspath ../shared/data)
export REPRO_DATA_DIR

.PHONY: setup build mini test unit fuzz experiments reproduce check docs

setup:
	bash scripts/setup.sh

build:
	go build -o repro ./cmd/repro

mini: setup build
	./repro run experiments/gense.hcl --profile mini $(if $(NO_MIRROR),--no-mirror)

unit:
	go vet ./...
	go test -count=1 ./...

# A short run of each fuzz target (their corpora are committed under
# testdata/fuzz and run by `go test` every time). Counts, not durations: a
# duration -fuzztime races Go 1.26's fuzz coordinator (golang/go#75804:
# "context deadline exceeded" at the deadline with no failing input; it
# failed a CI run here), and a count has no deadline to race. Each count is
# a few seconds on a 2-core machine (FuzzLoadEncoder loads a checkpoint per
# input, so it gets fewer); longer runs: make fuzz FUZZTIME=1000000x.
FUZZTIME ?= 20000x
FUZZSLOW ?= 3000x
fuzz:
	go test ./dsl -run '^$$' -fuzz '^FuzzLoadSource$$' -fuzztime $(FUZZTIME)
	go test ./dsl -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZTIME)
	go test ./internal/dataset -run '^$$' -fuzz '^FuzzReaders$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/safetensors -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/checkpoint -run '^$$' -fuzz '^FuzzLoadEncoder$$' -fuzztime $(FUZZSLOW)
	go test ./internal/model/checkpoint -run '^$$' -fuzz '^FuzzWeightsIndex$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/checkpoint -run '^$$' -fuzz '^FuzzTokenizerConfig$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/gpt2 -run '^$$' -fuzz '^FuzzLoadConfig$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/t5 -run '^$$' -fuzz '^FuzzLoadConfig$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/tokenizer -run '^$$' -fuzz '^FuzzWordPiece$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/tokenizer -run '^$$' -fuzz '^FuzzBPE$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/tokenizer -run '^$$' -fuzz '^FuzzSentencePiece$$' -fuzztime $(FUZZTIME)
	go test ./internal/model/tokenizer -run '^$$' -fuzz '^FuzzUnigramJSON$$' -fuzztime $(FUZZTIME)

# docs/results/*.md: the recorded results as tables (a test checks them).
docs: build
	./repro docs experiments/*.hcl --out docs/results

experiments: build
	bash scripts/experiments.sh ci

reproduce: setup build
	bash scripts/experiments.sh mini

test: unit fuzz experiments
