#!/usr/bin/env bash
# drainflow's test command, the one place that decides whether tests need the local stack and
# which tests may run side by side. Runs test files with node's test runner (spec reporter) in
# lanes; at the end the slowest files and one `N passed, N failed, N skipped` line over all of them
# (per-file report in test-results/):
#   unit      test/unit      pure logic; needs nothing
#   workflow  test/workflow  workflows on @temporalio/testing's time-skipping server; needs only the
#                            pinned temporal-test-server binary (installed by build.sh when missing)
#   e2e       test/e2e       real kube-apiserver + kube-controller-manager + kwok and a real Temporal
#                            dev server: the local stack is brought up once (building what is
#                            missing) and stopped again if this run started it (unless
#                            DRAINFLOW_KEEP_STACK is set)
# The stack is started only when some file to run lies outside test/unit and test/workflow.
#
# Lanes (see CONTRIBUTING.md, Tests):
#   unit          every unit file in one process
#   workflow      a process per file, one at a time
#   e2e           e2e files marked `// test-lane: parallel` (own namespaces, nodes, task queues,
#                 plan selector), DRAINFLOW_TEST_E2E_CONCURRENCY (default 3) at a time
#   e2e-serial    e2e files marked `// test-lane: serial (why)` (they stop a shared server or
#                 see what other files do), one at a time with nothing else of e2e running
# Every test/e2e file says its lane on its first line; a file without that line is refused.
# Usage: npm test [-- <suite names, test files or globs>]   (no arguments: unit, workflow and e2e)
#        npm run test:unit | test:workflow | test:e2e
set -euo pipefail
shopt -s globstar
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STACK=scripts/stack/stack.sh
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(unit workflow e2e)
unit=(); workflow=(); e2e=(); serial=()
need_stack=0
need_temporal=0
for a in "${args[@]}"; do
  case "$a" in
    unit | workflow | e2e) a="test/$a/**/*.test.ts" ;;
  esac
  a="${a#./}"
  # Globs are expanded here (each file's lane depends on it); one that matches nothing is passed
  # on as it is, and node's runner reports it.
  matches=()
  if [[ "$a" == *[*?[]* ]]; then
    for m in $a; do [[ -e "$m" ]] && matches+=("$m"); done
  fi
  [[ ${#matches[@]} -eq 0 ]] && matches=("$a")
  for f in "${matches[@]}"; do
    case "$f" in
      test/unit/*) unit+=("$f") ;;
      test/workflow/*) workflow+=("$f"); need_temporal=1 ;;
      test/e2e/*)
        need_stack=1
        lane=$(head -n 1 "$f" 2>/dev/null || true)
        case "$lane" in
          "// test-lane: parallel") e2e+=("$f") ;;
          "// test-lane: serial ("*")") serial+=("$f") ;;
          *)
            echo "[test] $f: its first line must say its lane: '// test-lane: parallel' (own namespace," \
              "nodes, task queue and plan selector; runs beside other e2e files) or" \
              "'// test-lane: serial (<why>)' (runs alone); see CONTRIBUTING.md, Tests" >&2
            exit 2
            ;;
        esac
        ;;
      *) need_stack=1; serial+=("$f") ;;
    esac
  done
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
# e2e files start drainflow as processes (bin/drainflow.js): compiled first, so that each starts
# without tsx's loader (about a second of CPU less per process, and less memory). bin/drainflow.js
# runs dist/ only while no file under src/ is newer, so a stale build is never used.
if [[ $need_stack == 1 && ( ! -e dist/cli/main.js || -n "$(find src -name '*.ts' -newer dist/cli/main.js -print -quit)" ) ]]; then
  start=$SECONDS
  npm run --silent build
  echo "[test] npm run build (for the e2e processes): $((SECONDS - start)) s" >&2
fi
echo "[test] node $(node --version); unit ${#unit[@]}, workflow ${#workflow[@]}, e2e ${#e2e[@]} side by side" \
  "+ ${#serial[@]} alone" >&2
# Each lane writes its per-file report (scripts/test-report.ts) into $REPORTS; the summary at the
# end merges them (slowest files, one `N passed, N failed` line over all lanes).
REPORTS="${DRAINFLOW_TEST_REPORTS:-test-results}"
rm -rf "$REPORTS"; mkdir -p "$REPORTS"
status=0
# run LANE NODE_TEST_ARGS...: one node test runner; its report goes to $REPORTS/LANE.json; fails
# when a test failed.
# --test-timeout: a test or hook that hangs (a promise that never settles) fails after 15 min
# instead of holding the run until CI's limit; tests that need longer set their own timeout.
run() {
  local lane="$1"; shift
  local start=$SECONDS rc=0
  DRAINFLOW_TEST_REPORT="$REPORTS/$lane.json" node --import tsx --test --test-reporter=spec \
    --test-reporter-destination=stdout --test-reporter=./scripts/test-report.ts \
    --test-reporter-destination="$REPORTS/$lane.log" --test-timeout=900000 "$@" || rc=$?
  echo "[test] lane $lane: $((SECONDS - start)) s" >&2
  return $rc
}
# Unit tests are pure (no I/O, no shared state): one process for all of them, so the TypeScript
# loader starts once instead of once per file.
if [[ ${#unit[@]} -gt 0 ]]; then run unit --test-isolation=none "${unit[@]}" || status=1; fi
# Workflow files: a process each (its own time-skipping server), one at a time.
workflow_pid=
if [[ ${#workflow[@]} -gt 0 ]]; then
  if [[ -n "${DRAINFLOW_TEST_OVERLAP:-}" && $(( ${#e2e[@]} + ${#serial[@]} )) -gt 0 ]]; then
    run workflow --test-concurrency=1 "${workflow[@]}" 2>&1 | sed -u 's/^/[workflow] /' &
    workflow_pid=$!
  else
    run workflow --test-concurrency=1 "${workflow[@]}" || status=1
  fi
fi
# e2e files side by side: each works in namespaces, nodes, task queues and plans of its own.
if [[ ${#e2e[@]} -gt 0 ]]; then
  run e2e --test-concurrency="${DRAINFLOW_TEST_E2E_CONCURRENCY:-3}" "${e2e[@]}" || status=1
fi
# Then the files that must run alone.
if [[ ${#serial[@]} -gt 0 ]]; then run e2e-serial --test-concurrency=1 "${serial[@]}" || status=1; fi
if [[ -n "$workflow_pid" ]]; then wait "$workflow_pid" || status=1; fi
node --import tsx scripts/test-summary.ts "$REPORTS"
exit $status
