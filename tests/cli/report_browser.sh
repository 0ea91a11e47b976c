#!/bin/sh
# report_browser.sh ETLKIT OUTDIR [SAMPLED] - an etlkit report in a real browser: Debian's chromium, headless,
# network off (report_browser.js over the DevTools pipe): no console error, no request, every section,
# hover and sorting work, it prints. The page, its screenshots (light and dark) and the PDF stay in
# OUTDIR as build artifacts. SAMPLED, a trace with SampledProfile events: its page's flame graph draws
# and zooms on a click. Skips (exit 77, one line) only when chromium cannot be installed.
set -u
etlkit=$1
out=$2
sampled=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
find_chrome() { command -v chromium || command -v chromium-browser || true; }
chrome=$(find_chrome)
if [ -z "$chrome" ] || ! command -v node >/dev/null 2>&1; then
  sh "$here/../../scripts/deps.sh" test >/dev/null 2>&1 # apt-get only what is missing
  chrome=$(find_chrome)
fi
if [ -z "$chrome" ]; then
  echo "SKIP: chromium cannot be installed here (scripts/deps.sh test installs Debian's chromium)"
  exit 77
fi
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node cannot be installed here (scripts/deps.sh test installs it)"
  exit 77
fi
mkdir -p "$out" || exit 1
"$etlkit" synth --quiet --pmc 4 --seed 3 -o "$out/browser.etl" --force || { echo "FAIL: synth"; exit 1; }
"$etlkit" report "$out/browser.etl" -o "$out/report.html" --force --title "etlkit report of a synthesized trace" ||
  { echo "FAIL: report"; exit 1; }
flame=
if [ -n "$sampled" ] && [ -f "$sampled" ]; then
  "$etlkit" report "$sampled" -o "$out/flame.html" --force || { echo "FAIL: report of $sampled"; exit 1; }
  flame="file://$out/flame.html"
fi
node "$here/report_browser.js" "$chrome" "file://$out/report.html" "$out" $flame
