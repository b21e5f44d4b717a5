#!/usr/bin/env bash
# Checks docs/alerts.yml with promtool and runs its rule unit tests. promtool comes from
# Debian's prometheus package: the one on PATH, else the package's binary unpacked into
# .keel/tools (downloaded with apt-get, never installed as a service).
set -euo pipefail
cd "$(dirname "$0")/.."

promtool=$(command -v promtool || true)
if [ -z "$promtool" ]; then
  promtool=.keel/tools/prometheus/usr/bin/promtool
  if [ ! -x "$promtool" ]; then
    echo "[test] promtool is missing: unpacking it from Debian's prometheus package"
    mkdir -p .keel/tools/download
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
    (cd .keel/tools/download && { apt-get download prometheus >/dev/null 2>&1 || { $sudo_cmd apt-get update -qq && apt-get download prometheus >/dev/null; }; })
    dpkg-deb -x .keel/tools/download/prometheus_*.deb .keel/tools/prometheus
    rm -rf .keel/tools/download
  fi
fi

"$promtool" check rules docs/alerts.yml
output=$("$promtool" test rules docs/alerts.test.yml 2>&1) || { echo "$output"; exit 1; }
echo "$output"
# One line for the summary: each rule test group counts as a test.
groups=$(grep -c '^  - interval:' docs/alerts.test.yml)
mkdir -p .keel/reports
printf '{"numPassedTests": %d, "numFailedTests": 0, "numPendingTests": 0}\n' "$groups" > .keel/reports/alerts.json
