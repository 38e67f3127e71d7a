#!/usr/bin/env bash
# drainflow's test command (`npm test`): brings the local stack up once (building what is missing),
# runs every test file with node's test runner — unit, workflow (time-skipping server), e2e (real
# kube-apiserver + kube-controller-manager + kwok, real Temporal dev server) — one file at a time
# (e2e files share the cluster's nodes), and stops the stack again if this run started it.
# Usage: npm test [-- <test files or globs>]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACK=scripts/stack/stack.sh
started=0
if ! bash "$STACK" status >/dev/null 2>&1; then started=1; fi
cleanup() { if [[ $started == 1 && -z "${DRAINFLOW_KEEP_STACK:-}" ]]; then bash "$STACK" down || true; fi; }
trap cleanup EXIT
bash "$STACK" up --nodes "${DRAINFLOW_TEST_NODES:-3}"
eval "$(bash "$STACK" env)"
files=("$@")
[[ ${#files[@]} -eq 0 ]] && files=('test/unit/**/*.test.ts' 'test/workflow/**/*.test.ts' 'test/e2e/**/*.test.ts')
echo "[test] node $(node --version); files: ${files[*]}" >&2
node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
