#!/usr/bin/env bash
# drainflow's test command, the one place that decides whether tests need the local stack.
# Runs test files with node's test runner (spec reporter), one file at a time (e2e files share the
# cluster's nodes):
#   unit      test/unit      pure logic; needs nothing
#   workflow  test/workflow  workflows on @temporalio/testing's time-skipping server; needs only the
#                            pinned temporal-test-server binary (installed by build.sh when missing)
#   e2e       test/e2e       real kube-apiserver + kube-controller-manager + kwok and a real Temporal
#                            dev server: the local stack is brought up once (building what is
#                            missing) and stopped again if this run started it (unless
#                            DRAINFLOW_KEEP_STACK is set)
# The stack is started only when some file to run lies outside test/unit and test/workflow.
# Usage: npm test [-- <suite names, test files or globs>]   (no arguments: unit, workflow and e2e)
#        npm run test:unit | test:workflow | test:e2e
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACK=scripts/stack/stack.sh
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(unit workflow e2e)
files=()
need_stack=0
need_temporal=0
for a in "${args[@]}"; do
  case "$a" in
    unit | workflow | e2e) a="test/$a/**/*.test.ts" ;;
  esac
  a="${a#./}"
  files+=("$a")
  case "$a" in
    test/unit/*) ;;
    test/workflow/*) need_temporal=1 ;;
    *) need_stack=1 ;;
  esac
done
if [[ $need_stack == 1 ]]; then
  started=0
  if ! bash "$STACK" status >/dev/null 2>&1; then started=1; fi
  cleanup() { if [[ $started == 1 && -z "${DRAINFLOW_KEEP_STACK:-}" ]]; then bash "$STACK" down || true; fi; }
  trap cleanup EXIT
  bash "$STACK" up --nodes "${DRAINFLOW_TEST_NODES:-3}"
  eval "$(bash "$STACK" env)"
elif [[ $need_temporal == 1 ]]; then
  bash "$STACK" build temporal
fi
echo "[test] node $(node --version); files: ${files[*]}" >&2
# --test-timeout: a test or hook that hangs (a promise that never settles) fails after 15 min
# instead of holding the run until CI's limit; tests that need longer set their own timeout.
node --import tsx --test --test-concurrency=1 --test-timeout=900000 --test-reporter=spec "${files[@]}"
