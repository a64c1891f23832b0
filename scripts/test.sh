#!/usr/bin/env bash
# The one test command (README: `npm ci && npm test`): lint, typecheck, then every suite — unit,
# registries against real etcd/ZooKeeper/Redis, integration, chaos, demo smoke. The servers the
# suites need are installed here when missing and started/stopped by the test setup on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== services: etcd, ZooKeeper, Redis"
bash scripts/services/install.sh

echo "== lint (biome)"
npx biome ci .

echo "== typecheck (tsc strict)"
npx tsc -p tsconfig.check.json

echo "== tests (vitest)"
mkdir -p .tmp
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-report.json "$@" || status=$?
# One plain closing line that any CI reads: "N passed, N failed, N skipped".
node -e '
  const r = JSON.parse(require("fs").readFileSync(".tmp/vitest-report.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' || true
exit "$status"
