#!/bin/bash
# Times N creates, one after another, each with a 10 MB file (a few bytes differ each time, so each is stored anew),
# against a server started from CHECKOUT on a fresh data folder. wrk sends no multipart files, so uploads are timed
# here (bench/README.md, "Two changes after that run"). Usage: bash bench/uploads.sh [CHECKOUT] [PORT] [N]
set -euo pipefail
cd "${1:-.}"
PORT=${2:-18951}
N=${3:-40}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
head -c 10000000 /dev/urandom >"$D/big.bin"
export DATA_DIR=$D/data PORT HOST=127.0.0.1
npm run --silent cli -- user add alice </dev/null >/dev/null 2>&1
T=$(npm run --silent cli -- token create --user alice --scopes read,write --rate 100000 | tail -1)
node --import tsx src/main.ts >"$D/log" 2>&1 &
PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break || sleep 0.2; done
create() {
  curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $T" -F content=x -F "file=@$D/big.bin" \
    "http://127.0.0.1:$PORT/api/v1/paste_create.php"
}
create >/dev/null
START=$(date +%s%N)
for _ in $(seq "$N"); do
  head -c 16 /dev/urandom >>"$D/big.bin"
  code=$(create)
  [ "$code" = 200 ] || echo "a create answered $code" >&2
done
END=$(date +%s%N)
kill "$PID"
wait "$PID" || true
echo "$N creates with a 10 MB file: $(((END - START) / 1000000)) ms"
