# flamediff: small Makefile; `make help` lists the targets.
GO       ?= go
FUZZTIME ?= 10s
BIN      ?= bin/flamediff

.PHONY: help build test generate bench fuzz lint fmt ci

help:
	@echo "targets: build test bench fuzz lint fmt generate ci"

build:
	$(GO) build -o $(BIN) ./cmd/flamediff

generate:
	$(GO) generate ./...

test:
	$(GO) vet ./...
	$(GO) test -race ./...

# Fold throughput on >100 MB of real perf script text, and the ratio to
# stackcollapse-perf.pl (25 MB/s, or measured live with STACKCOLLAPSE_PL=path).
bench:
	./bench/fold.sh

# A short pass of every fuzz test.
fuzz:
	./bench/fuzz.sh $(FUZZTIME)

lint:
	golangci-lint run ./...

fmt:
	gofmt -w .

ci:
	bash .ci/run
