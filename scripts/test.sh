#!/usr/bin/env bash
# Runs Parsec's whole test suite: Go unit, fuzz-seed, SDK and process tests,
# then the JavaScript SDK tests. Installs what it needs (Go modules, npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== build"
mkdir -p bin
go build -o bin/parsec ./cmd/parsec

echo "== go test"
go test -count=1 -timeout 15m ./...

echo "== short fuzzing"
fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-5s}" "$1" >/dev/null; echo "fuzzed $2 ($1)"; }
fuzz ./internal/epk FuzzParseHeader
fuzz ./internal/epk FuzzComponentFromJSON
fuzz ./internal/jsondoc FuzzScan
fuzz ./internal/jsondoc FuzzApplyPatch
fuzz ./internal/engine FuzzPrepareWrite
fuzz ./internal/query/parser FuzzParse
fuzz ./internal/query/eval FuzzFromJSON

echo "== JavaScript SDK tests (@azure/cosmos)"
(cd test/js && npm ci --no-audit --no-fund --loglevel=error && PARSEC_BIN="$PWD/../../bin/parsec" npm test)
