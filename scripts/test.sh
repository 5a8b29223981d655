#!/usr/bin/env bash
# Runs Parsec's whole test suite: the gofmt, go mod tidy, vet and staticcheck
# gates; Go unit, fuzz-seed, SDK, process and resource tests; the race
# detector on the concurrent core; every fuzz target briefly; then the
# JavaScript SDK tests; then the Python Table SDK tests. Installs what it
# needs (Go modules, staticcheck at a pinned version, npm ci, Debian's
# chromium and python3-azure).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt'ed (run gofmt -w):"
  echo "$unformatted"
  exit 1
fi

echo "== go mod tidy"
go mod tidy -diff

echo "== go vet"
go vet ./...

echo "== staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

echo "== build"
mkdir -p bin
go build -o bin/parsec ./cmd/parsec

echo "== go test"
go test -count=1 -timeout 15m ./...

echo "== race detector (engine, storage, throughput, query executor)"
go test -race -count=1 -timeout 10m ./internal/engine ./internal/storage ./internal/throughput ./internal/query/exec

echo "== short fuzzing"
# A finding is saved under the package's testdata/fuzz/ and fails the run. A
# failure of the fuzzing engine itself (a worker that hangs on a loaded machine)
# saves nothing: it is retried, twice at most.
fuzz() {
  local out
  for try in 1 2 3; do
    if out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-5s}" "$1" 2>&1); then
      echo "fuzzed $2 ($1)"
      return 0
    fi
    if [ -n "$(git status --porcelain -- "$1/testdata/fuzz" 2>/dev/null)" ]; then
      echo "$out"
      echo "fuzzing $2 found a failing input (saved under $1/testdata/fuzz)"
      return 1
    fi
    echo "fuzzing engine failed for $2 without a finding (try $try):"
    echo "$out" | tail -5
  done
  return 1
}
# Every fuzz target of the module (file:func lines), found by name, so that a
# new one is fuzzed without being listed here.
mapfile -t targets < <(git grep -o -E '^func Fuzz[A-Za-z0-9_]+' -- '*_test.go')
if [ "${#targets[@]}" -eq 0 ]; then
  echo "no fuzz targets found"
  exit 1
fi
for t in "${targets[@]}"; do
  fuzz "./$(dirname "${t%%:*}")" "${t##*func }"
done

echo "== JavaScript tests (@azure/cosmos; the MongoDB Node.js driver and mongosh; the advise report and Parsec Explorer in headless Chromium)"
# The browser tests drive Debian's Chromium through playwright-core, which
# never downloads a browser of its own. Install it once; later runs find it in place.
if [ ! -x /usr/bin/chromium ]; then
  echo "installing chromium (Debian package)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi
(cd test/js && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error &&
  PARSEC_BIN="$PWD/../../bin/parsec" npm test)

echo "== Python tests (azure-data-tables from Debian's python3-azure against the Table API)"
# Debian's system Python, not whatever python3 comes first on PATH: the
# package installs into /usr/lib/python3/dist-packages. Install it once.
if ! /usr/bin/python3 -c 'import azure.data.tables' 2>/dev/null; then
  echo "installing python3-azure (Debian package)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq python3-azure >/dev/null
fi
PARSEC_BIN="$PWD/bin/parsec" /usr/bin/python3 test/python/tables_test.py
