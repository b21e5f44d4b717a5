#!/usr/bin/env bash
# Every test tier: types, unit, integration on real PostgreSQL, and Playwright in Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x "${KEEL_CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "[test] Chromium is missing: installing Debian's chromium package"
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  fi
fi

# The two-instance e2e makes a streaming replica with pg_basebackup, which the embedded
# PostgreSQL does not ship: it uses the machine's PostgreSQL server binaries.
if [ -z "${KEEL_PG_BIN:-}" ] && ! ls /usr/lib/postgresql/*/bin/pg_basebackup > /dev/null 2>&1; then
  echo "[test] PostgreSQL server binaries (pg_basebackup) are missing: installing Debian's postgresql package"
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
  fi
fi

mkdir -p .keel/reports
rm -f .keel/reports/*.json
started=$(date +%s)

echo "[test] type check"
npx tsc --noEmit -p .

echo "[test] dependency rules"
npm run --silent lint:deps

echo "[test] alerting rules (promtool)"
bash scripts/check-alerts.sh

echo "[test] unit"
npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=.keel/reports/unit.json

echo "[test] integration (real PostgreSQL)"
npx vitest run --project integration --reporter=default --reporter=json --outputFile.json=.keel/reports/integration.json

echo "[test] end-to-end (production build, Chromium)"
npx playwright test

# The e2e server was stopped with SIGTERM: its PostgreSQL must be gone too.
if pgrep -f -- "-D $(pwd)/.keel/e2e/pg" > /dev/null; then
  echo "[test] FAILED: a postgres process is left behind after the console stopped"
  exit 1
fi

# The e2e server ran `keel start`, which builds into .next: weigh that build's pages.
echo "[test] client weight (first-load JavaScript per page, gzip)"
node scripts/bundle-budget.mjs --dir .next

node scripts/test-summary.mjs .keel/reports/alerts.json .keel/reports/unit.json .keel/reports/integration.json .keel/reports/e2e.json
echo "[test] wall time: $(( $(date +%s) - started ))s"
