#!/usr/bin/env bash
# drainflow's test command, the one place that decides whether tests need the local stack.
# Runs test files with node's test runner (spec reporter): unit tests in one process, workflow and
# e2e files one at a time (e2e files share the cluster's nodes); at the end the slowest files and
# one `N passed, N failed, N skipped` line over all of them (per-file report in test-results/):
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
# Lanes: each writes its per-file report (scripts/test-report.ts) into $REPORTS; the summary at the
# end merges them (slowest files, one `N passed, N failed` line over all lanes).
REPORTS="${DRAINFLOW_TEST_REPORTS:-test-results}"
rm -rf "$REPORTS"; mkdir -p "$REPORTS"
unit=(); rest=()
for f in "${files[@]}"; do
  case "$f" in test/unit/*) unit+=("$f") ;; *) rest+=("$f") ;; esac
done
status=0
# run LANE NODE_TEST_ARGS...: one node test runner; its report goes to $REPORTS/LANE.json.
run() {
  local lane="$1"; shift
  DRAINFLOW_TEST_REPORT="$REPORTS/$lane.json" DRAINFLOW_TEST_TIMING="${timing:-wall}" node --import tsx --test --test-reporter=spec \
    --test-reporter-destination=stdout --test-reporter=./scripts/test-report.ts \
    --test-reporter-destination="$REPORTS/$lane.log" "$@" || status=1
}
# Unit tests are pure (no I/O, no shared state): one process for all of them, so the TypeScript
# loader starts once instead of once per file.
if [[ ${#unit[@]} -gt 0 ]]; then timing=tests run unit --test-isolation=none "${unit[@]}"; fi
# Workflow and e2e files: a process each, one at a time (e2e files share the cluster's nodes).
# --test-timeout: a test or hook that hangs (a promise that never settles) fails after 15 min
# instead of holding the run until CI's limit; tests that need longer set their own timeout.
if [[ ${#rest[@]} -gt 0 ]]; then run files --test-concurrency=1 --test-timeout=900000 "${rest[@]}"; fi
node --import tsx scripts/test-summary.ts "$REPORTS"
exit $status
