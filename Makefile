# flamediff: small Makefile; `make help` lists the targets.
GO       ?= go
FUZZTIME ?= 10s
BIN      ?= bin/flamediff

.PHONY: help build test quick generate docs bench bench-overhead bench-overhead-paired bench-overhead-offcpu bench-fidelity bench-svg demo fuzz lint fmt ci

help:
	@echo "targets: demo build test quick bench bench-overhead bench-overhead-paired bench-overhead-offcpu bench-fidelity bench-svg fuzz lint fmt generate docs ci"

build:
	$(GO) build -buildvcs=true -o $(BIN) ./cmd/flamediff

generate:
	$(GO) generate ./...

# The command reference docs/commands/*.md, from the commands' help texts
# and flags (TestCommandDocsCurrent fails when it is out of date).
docs:
	$(GO) run ./cmd/flamediff docs docs/commands

# The test command of the README and CI: installs what the tests need
# (as root), then vet, lint, the tests and a short fuzz pass.
test:
	bash .ci/run

# vet and the tests on what this machine has (missing tools: tests skip).
quick:
	$(GO) vet ./...
	$(GO) test -race ./...

# Fold throughput on >100 MB of real perf script text, and the ratio to
# stackcollapse-perf.pl (25 MB/s, or measured live with STACKCOLLAPSE_PL=path).
bench:
	./bench/fold.sh

# Capture overhead: sysbench QPS on a real MariaDB without sampling and with
# perf and the BPF sampler (per-thread and per-CPU events) at 99 and 999 Hz,
# with and without the off-CPU program (#19), interleaved rounds, median
# ratios and sampled/accounted CPU; then the off-CPU program's run time per
# context switch without a server (BenchmarkOffCPUSwitch), and the switch
# fix's (BenchmarkSwitchFixSwitch). Needs root,
# mariadb-server, sysbench and linux-perf. FLAMEDIFF_BENCH_PAIRS,
# FLAMEDIFF_BENCH_SECONDS, FLAMEDIFF_BENCH_TEST and FLAMEDIFF_BENCH_CONFIGS
# tune it. Measure on a quiet machine (flock /tmp/flamediff-quiet.lock make ...).
bench-overhead:
	$(GO) test ./bench -run '^$$' -bench 'CaptureOverhead$$' -benchtime 1x -timeout 60m
	$(GO) test ./bpf -run '^$$' -bench 'OffCPUSwitch|SwitchFixSwitch' -benchtime 20000x

# Capture overhead with the sampler switched on and off in phases of a few
# seconds during one sysbench run (BenchmarkCaptureOverheadPaired): each
# on-phase's QPS against its neighbouring off-phases, and an A/A
# configuration ("aa") for the method's own spread. FLAMEDIFF_BENCH_CYCLES,
# FLAMEDIFF_BENCH_PHASE, FLAMEDIFF_BENCH_CONFIGS, FLAMEDIFF_BENCH_TEST and
# FLAMEDIFF_BENCH_PIN tune it.
bench-overhead-paired:
	$(GO) test ./bench -run '^$$' -bench CaptureOverheadPaired -benchtime 1x -timeout 60m

# The off-CPU program's overhead alone: point-select and update-nonindex,
# the BPF sampler at 99 Hz with and without it (user stacks, then kernel
# stacks too as in the lab), then BenchmarkOffCPUSwitch.
OFFCPU_CONFIGS = bpf-99Hz,bpf-offcpu-99Hz,bpf-k-99Hz,bpf-k-offcpu-99Hz
bench-overhead-offcpu:
	for t in oltp_point_select oltp_update_non_index; do \
		FLAMEDIFF_BENCH_TEST=$$t FLAMEDIFF_BENCH_CONFIGS=$(OFFCPU_CONFIGS) \
			$(GO) test ./bench -run '^$$' -bench 'CaptureOverhead$$' -benchtime 1x -timeout 60m || exit 1; \
	done
	$(GO) test ./bpf -run '^$$' -bench OffCPUSwitch -benchtime 20000x

# Sampled against true CPU per function (internal/cputruth): each
# sampler's shares and sampled/accounted CPU on programs whose CPU per
# function is known (root, gcc, perf).
bench-fidelity:
	$(GO) test ./bench -run '^$$' -bench Fidelity -benchtime 1x -timeout 60m

# Flame graph of 100,000 distinct stacks with the default --minwidth: time
# and SVG size (target: under 1 s and 5 MB).
bench-svg:
	$(GO) test ./flamegraph -run '^$$' -bench Render100k -benchtime 5x -benchmem

# The version lab on MariaDB 10.5, 10.11 and 11.8 and MySQL 9.7 (root;
# fetches 10.5, 11.8 and 9.7 from Debian): the report lands in out/demo.
demo:
	./scripts/demo.sh

# A short pass of every fuzz test.
fuzz:
	./bench/fuzz.sh $(FUZZTIME)

lint:
	golangci-lint run ./...

fmt:
	gofmt -w .

ci:
	bash .ci/run
