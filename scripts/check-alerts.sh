#!/usr/bin/env bash
# Checks docs/alerts.yml with promtool and runs its rule unit tests. promtool, and the
# prometheus server that e2e/prometheus-alerts.spec.ts runs the rules in, come from
# Debian's prometheus package: the ones on PATH, else the package's binaries unpacked into
# .keel/tools (downloaded with apt-get, never installed as a service).
set -euo pipefail
cd "$(dirname "$0")/.."

tools=.keel/tools/prometheus/usr/bin
if { ! command -v promtool || ! command -v prometheus; } > /dev/null && [ ! -x "$tools/prometheus" ]; then
  echo "[test] promtool or prometheus is missing: unpacking them from Debian's prometheus package"
  mkdir -p .keel/tools/download
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  (cd .keel/tools/download && { apt-get download prometheus >/dev/null 2>&1 || { $sudo_cmd apt-get update -qq && apt-get download prometheus >/dev/null; }; })
  dpkg-deb -x .keel/tools/download/prometheus_*.deb .keel/tools/prometheus
  rm -rf .keel/tools/download
fi
promtool=$(command -v promtool || echo "$tools/promtool")
"$(command -v prometheus || echo "$tools/prometheus")" --version > /dev/null

"$promtool" check rules docs/alerts.yml
output=$("$promtool" test rules docs/alerts.test.yml 2>&1) || { echo "$output"; exit 1; }
echo "$output"
# One line for the summary: each rule test group counts as a test.
groups=$(grep -c '^  - interval:' docs/alerts.test.yml)
mkdir -p .keel/reports
printf '{"numPassedTests": %d, "numFailedTests": 0, "numPendingTests": 0}\n' "$groups" > .keel/reports/alerts.json
