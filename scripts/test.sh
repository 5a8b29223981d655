#!/usr/bin/env bash
# Runs Parsec's whole test suite: the gofmt, go mod tidy, vet and staticcheck
# gates; Go unit, fuzz-seed, SDK, process and resource tests; the race
# detector on the concurrent core; every fuzz target briefly; then the
# JavaScript SDK tests; then the Python Table SDK tests. Installs what it
# needs (Go modules, staticcheck at a pinned version, npm ci, Debian's
# chromium and python3-azure).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages of the last steps: Chromium, which the browser tests drive
# through playwright-core (it never downloads a browser of its own), and
# python3-azure, whose azure-data-tables the Python tests use. Installed
# once, in the background while the Go suites run (dpkg takes one install
# at a time, so one job installs both); later runs find them in place.
apt_log=$(mktemp)
apt_pid=
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
/usr/bin/python3 -c 'import azure.data.tables' 2>/dev/null || missing+=(python3-azure)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} (Debian packages) in the background"
  (export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${missing[@]}") >"$apt_log" 2>&1 &
  apt_pid=$!
fi
# debian_packages waits for that install and fails the run if it failed.
debian_packages() {
  if [ -n "$apt_pid" ]; then
    if ! wait "$apt_pid"; then
      tail -20 "$apt_log"
      echo "installing ${missing[*]} failed"
      return 1
    fi
    apt_pid=
  fi
}

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
debian_packages
(cd test/js && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error &&
  PARSEC_BIN="$PWD/../../bin/parsec" npm test)

echo "== Python tests (azure-data-tables from Debian's python3-azure against the Table API)"
# Debian's system Python, not whatever python3 comes first on PATH: the
# package installs into /usr/lib/python3/dist-packages.
PARSEC_BIN="$PWD/bin/parsec" /usr/bin/python3 test/python/tables_test.py
