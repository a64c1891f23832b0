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
npx vitest run "$@"
