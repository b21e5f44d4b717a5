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
rm -f .keel/reports/*.json .keel/reports/tiers.txt .keel/reports/build.*
started=$(date +%s)

# Runs one tier and records its wall time for the summary.
tier() {
  local name=$1
  shift
  echo "[test] $name"
  local began
  began=$(date +%s)
  "$@"
  echo "$name	$(( $(date +%s) - began ))" >> .keel/reports/tiers.txt
}

tier "type check" npx tsc --noEmit -p .
# The production build the e2e tier serves, made beside the tiers below, which leave a core idle
# much of the time (vitest's start-up, tests waiting on PostgreSQL); `keel start` in the e2e tier
# serves it as it is, made from the same sources (lib/cli/start.ts). After the type check, which
# would otherwise read the route types the build writes into .next/types as they are written.
build_began=$(date +%s)
(
  NEXT_TELEMETRY_DISABLED=1 npx next build > .keel/reports/build.log 2>&1
  echo $? > .keel/reports/build.rc
  date +%s > .keel/reports/build.end
) &
build_pid=$!
trap 'kill "$build_pid" 2> /dev/null || true' EXIT

tier "lint and format (Biome)" npx biome ci .
tier "line length (120)" node scripts/check-line-length.mjs
tier "dependency rules" npm run --silent lint:deps
tier "alerting rules (promtool)" bash scripts/check-alerts.sh
tier "unit" npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=.keel/reports/unit.json
tier "integration (real PostgreSQL)" npx vitest run --project integration --reporter=default --reporter=json --outputFile.json=.keel/reports/integration.json
wait "$build_pid" || true
if [ "$(cat .keel/reports/build.rc 2> /dev/null)" != "0" ]; then
  echo "[test] FAILED: next build"
  cat .keel/reports/build.log
  exit 1
fi
echo "production build (beside the tiers above)	$(( $(cat .keel/reports/build.end) - build_began ))" >> .keel/reports/tiers.txt
tier "end-to-end (production build, Chromium)" npx playwright test

# The e2e server was stopped with SIGTERM: its PostgreSQL must be gone too.
if pgrep -f -- "-D $(pwd)/.keel/e2e/pg" > /dev/null; then
  echo "[test] FAILED: a postgres process is left behind after the console stopped"
  exit 1
fi

# The e2e server ran `keel start`, which builds into .next: weigh that build's pages.
echo "[test] client weight (first-load JavaScript per page, gzip)"
node scripts/bundle-budget.mjs --dir .next

echo "[test] wall time by tier:"
awk -F'\t' '{ printf "[test]   %-42s %5d s\n", $1, $2 }' .keel/reports/tiers.txt
node scripts/test-summary.mjs .keel/reports/alerts.json .keel/reports/unit.json .keel/reports/integration.json .keel/reports/e2e.json
echo "[test] wall time: $(( $(date +%s) - started ))s"
