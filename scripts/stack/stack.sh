#!/usr/bin/env bash
# drainflow's local stack: a real Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler) with kwok-simulated nodes, and the Temporal dev server,
# all as processes on 127.0.0.1. No containers.
#
#   stack.sh up [--nodes N]   build/install what is missing, start what is not running, wait healthy
#   stack.sh env              print `export ...` lines for eval
#   stack.sh status           show each component and its health
#   stack.sh down             stop what `up` started (pid files in the state dir)
#   stack.sh reset            down, then remove cluster and Temporal state
#
# Binaries live in ${DRAINFLOW_CACHE:-~/.cache/drainflow}/<component>-<version> (see build.sh);
# runtime state (PKI, etcd data, Temporal SQLite file, logs, pid files) in $DRAINFLOW_STATE
# (default ${DRAINFLOW_CACHE}/stack).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$HERE/versions.env"
CACHE="${DRAINFLOW_CACHE:-$HOME/.cache/drainflow}"
STATE="${DRAINFLOW_STATE:-$CACHE/stack}"
K8S_BIN="$CACHE/k8s-$K8S_VERSION/bin"
ETCD_BIN="$CACHE/etcd-$ETCD_VERSION/bin"
KWOK_BIN="$CACHE/kwok-$KWOK_VERSION/bin"
TEMPORAL_BIN="$CACHE/temporal-$TEMPORAL_CLI_VERSION-ts$TEMPORAL_TEST_SERVER_VERSION/bin"

ETCD_PORT="${DRAINFLOW_ETCD_PORT:-12379}"
ETCD_PEER_PORT="${DRAINFLOW_ETCD_PEER_PORT:-12380}"
# etcd's /metrics listener. Its own variable: the default (client port + 2) is the API server's
# port in a layout of consecutive ports (client, peer, apiserver, ...).
ETCD_METRICS_PORT="${DRAINFLOW_ETCD_METRICS_PORT:-$((ETCD_PORT + 2))}"
APISERVER_PORT="${DRAINFLOW_APISERVER_PORT:-16443}"
KCM_PORT="${DRAINFLOW_KCM_PORT:-10257}"
SCHEDULER_PORT="${DRAINFLOW_SCHEDULER_PORT:-10259}"
KWOK_PORT="${DRAINFLOW_KWOK_PORT:-10247}"
TEMPORAL_PORT="${DRAINFLOW_TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${DRAINFLOW_TEMPORAL_UI_PORT:-8233}"
TEMPORAL_HTTP_PORT="${DRAINFLOW_TEMPORAL_HTTP_PORT:-7243}"
TEMPORAL_METRICS_PORT="${DRAINFLOW_TEMPORAL_METRICS_PORT:-7253}"
TEMPORAL_NAMESPACE="${DRAINFLOW_TEMPORAL_NAMESPACE:-default}"
# Search attributes the workflows upsert, so the Temporal UI filters drains by plan name, node names, phase.
SEARCH_ATTRIBUTES=(DrainflowPlan=Keyword DrainflowNodes=KeywordList DrainflowPhase=Keyword DrainflowReason=Keyword)

PKI="$STATE/pki"
LOGS="$STATE/logs"
RUN="$STATE/run"
KUBECONFIG_FILE="$STATE/kubeconfig"
AUDIT_DIR="$STATE/audit"
# Client identities of the benchmark (bench/README.md): the tool under test gets its own user, so the
# API server's audit log (scripts/stack/audit-policy.yaml: only these users) tells its requests apart.
BENCH_USERS=(bench-drainflow bench-kubectl)

log() { echo "[stack] $*" >&2; }
die() { echo "[stack] ERROR: $*" >&2; exit 1; }

pid_alive() { local f="$RUN/$1.pid"; [[ -f "$f" ]] && kill -0 "$(cat "$f")" 2>/dev/null; }

# start NAME CMD...: runs CMD in its own session with output to $LOGS/NAME.log, records its pid.
start() {
  local name="$1"; shift
  if pid_alive "$name"; then log "$name: already running (pid $(cat "$RUN/$name.pid"))"; return; fi
  : > "$LOGS/$name.log"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN/$name.pid"
  log "$name: started (pid $!, log $LOGS/$name.log)"
}

# wait_for NAME TIMEOUT_SECONDS CHECK...: polls CHECK until it succeeds; on timeout or when the
# process died, names the component and its log.
wait_for() {
  local name="$1" timeout="$2"; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [[ -f "$RUN/$name.pid" ]] && ! pid_alive "$name"; then
      tail -n 20 "$LOGS/$name.log" >&2 || true
      die "$name exited; see its log: $LOGS/$name.log"
    fi
    if (( SECONDS >= deadline )); then
      tail -n 20 "$LOGS/$name.log" >&2 || true
      die "$name not healthy after ${timeout}s; see its log: $LOGS/$name.log"
    fi
    sleep 0.5
  done
}

kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
https_ok() { curl -fsS --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$1"; }

make_pki() {
  [[ -f "$PKI/admin.crt" && -f "$PKI/sa.pub" ]] && return
  log "pki: generating CA, serving and client certificates in $PKI"
  mkdir -p "$PKI"; local o=(-days 3650)
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt "${o[@]}" -subj "/CN=drainflow-local-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" \
      -addext "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1" 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt "${o[@]}" -copy_extensions copyall 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/CN=drainflow-admin/O=system:masters" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt "${o[@]}" 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr
  )
  write_kubeconfig drainflow-admin "$PKI/admin.crt" "$PKI/admin.key" "$KUBECONFIG_FILE"
}

# write_kubeconfig USER CERT KEY FILE: a kubeconfig for the local cluster with that client certificate.
write_kubeconfig() {
  cat > "$4" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: drainflow-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $1
  user:
    client-certificate: $2
    client-key: $3
contexts:
- name: drainflow-local
  context: {cluster: drainflow-local, user: $1}
current-context: drainflow-local
EOF
}

# The benchmark's users (group system:masters, as the admin): made once per state dir, also for a
# stack already running (the client CA does not change, so no restart is needed).
make_bench_users() {
  local u
  for u in "${BENCH_USERS[@]}"; do
    if [[ ! -f "$PKI/$u.crt" ]]; then
      (
        cd "$PKI"
        openssl req -newkey rsa:2048 -nodes -keyout "$u.key" -out "$u.csr" -subj "/CN=$u/O=system:masters" 2>/dev/null
        openssl x509 -req -in "$u.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$u.crt" -days 3650 2>/dev/null
        rm -f "$u.csr"
      )
    fi
    [[ -f "$STATE/kubeconfig-$u" ]] || write_kubeconfig "$u" "$PKI/$u.crt" "$PKI/$u.key" "$STATE/kubeconfig-$u"
  done
}

write_kwok_config() {
  # kwok >= 0.8 has no built-in stages. These give: nodes that become and stay Ready, pods that
  # become Running+Ready (optionally after the delay in annotation drainflow.dev/ready-delay, e.g.
  # "3s", so PodDisruptionBudgets bite), and pod deletion that honours the grace period: a pod with
  # a deletionTimestamp disappears at that timestamp, not at once.
  cp "$HERE/kwok-stages.yaml" "$STATE/kwok-stages.yaml"
}

start_k8s() {
  make_pki; make_bench_users; write_kwok_config
  mkdir -p "$AUDIT_DIR"; cp "$HERE/audit-policy.yaml" "$STATE/audit-policy.yaml"
  mkdir -p "$STATE/etcd"
  start etcd "$ETCD_BIN/etcd" --name drainflow --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "drainflow=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --quota-backend-bytes 4294967296 \
    --listen-metrics-urls "http://127.0.0.1:$ETCD_METRICS_PORT" --log-level warn
  wait_for etcd 60 curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

  start kube-apiserver "$K8S_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$APISERVER_PORT" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 --allow-privileged=true --endpoint-reconciler-type none \
    --cert-dir "$STATE/apiserver-certs" --max-requests-inflight 800 --max-mutating-requests-inflight 400 \
    --audit-policy-file "$STATE/audit-policy.yaml" --audit-log-path "$AUDIT_DIR/audit.log" \
    --audit-log-format json --audit-log-maxsize 100 --audit-log-maxbackup 2
  wait_for kube-apiserver 120 https_ok "https://127.0.0.1:$APISERVER_PORT/readyz"
  # Checked once it is ready: right after `setsid ... &` the pid may still run setsid's command line.
  if ! tr '\0' ' ' < "/proc/$(cat "$RUN/kube-apiserver.pid")/cmdline" | grep -q -- --audit-policy-file; then
    log "kube-apiserver: runs without the audit log (started by an older stack.sh); the bench's per-client request figures need it: restart the stack (down, then up) when nobody else uses it"
  fi

  start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig "$KUBECONFIG_FILE" --authentication-kubeconfig "$KUBECONFIG_FILE" --authorization-kubeconfig "$KUBECONFIG_FILE" \
    --leader-elect=false --root-ca-file "$PKI/ca.crt" --service-account-private-key-file "$PKI/sa.key" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --use-service-account-credentials=false \
    --node-monitor-grace-period 50s --kube-api-qps 200 --kube-api-burst 400 --concurrent-replicaset-syncs 10 \
    --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics
  wait_for kube-controller-manager 60 curl -fsSk --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz"

  start kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig "$KUBECONFIG_FILE" --authentication-kubeconfig "$KUBECONFIG_FILE" --authorization-kubeconfig "$KUBECONFIG_FILE" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" \
    --kube-api-qps 200 --kube-api-burst 400 --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics
  wait_for kube-scheduler 60 curl -fsSk --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/healthz"

  start kwok "$KWOK_BIN/kwok" --kubeconfig "$KUBECONFIG_FILE" --manage-all-nodes=true \
    --config "$STATE/kwok-stages.yaml" --node-lease-duration-seconds 40 --cidr 10.244.0.0/16 \
    --server-address "127.0.0.1:$KWOK_PORT"
  wait_for kwok 60 curl -fsS --max-time 2 "http://127.0.0.1:$KWOK_PORT/healthz"
}

ensure_nodes() {
  local n="$1" i
  for ((i = 0; i < n; i++)); do
    local name="kwok-node-$i"
    kubectl_ get node "$name" >/dev/null 2>&1 && continue
    kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    drainflow.dev/pool: local
spec:
  taints: []
EOF
  done
  # default ServiceAccount must exist before pods can be admitted (ServiceAccount admission).
  wait_for kube-controller-manager 60 kubectl_ get serviceaccount default -n default
  wait_for kwok 90 bash -c "[[ \$('$K8S_BIN/kubectl' --kubeconfig '$KUBECONFIG_FILE' get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}' | grep -c True) -ge $n ]]"
  log "kubernetes: $n kwok nodes Ready"
}

start_temporal() {
  mkdir -p "$STATE/temporal"
  # The SQLite schema is created only with a new file: key the file by CLI version.
  local db="$STATE/temporal/temporal-$TEMPORAL_CLI_VERSION.db"
  local sa=() a; for a in "${SEARCH_ATTRIBUTES[@]}"; do sa+=(--search-attribute "$a"); done
  start temporal "$TEMPORAL_BIN/temporal" server start-dev --db-filename "$db" --ip 127.0.0.1 \
    --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" --http-port "$TEMPORAL_HTTP_PORT" \
    --metrics-port "$TEMPORAL_METRICS_PORT" --namespace "$TEMPORAL_NAMESPACE" "${sa[@]}" \
    --dynamic-config-value frontend.enableUpdateWorkflowExecution=true \
    --dynamic-config-value frontend.enableUpdateWorkflowExecutionAsyncAccepted=true \
    --dynamic-config-value history.defaultWorkflowTaskTimeout='"30s"' \
    --log-level warn
  wait_for temporal 90 "$TEMPORAL_BIN/temporal" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT"
  # Attributes given at launch are registered only when the namespace is created (new file).
  local have; have="$("$TEMPORAL_BIN/temporal" operator search-attribute list --address "127.0.0.1:$TEMPORAL_PORT" --namespace "$TEMPORAL_NAMESPACE" 2>/dev/null || true)"
  for a in "${SEARCH_ATTRIBUTES[@]}"; do
    grep -q "${a%%=*}" <<<"$have" && continue
    "$TEMPORAL_BIN/temporal" operator search-attribute create --address "127.0.0.1:$TEMPORAL_PORT" \
      --namespace "$TEMPORAL_NAMESPACE" --name "${a%%=*}" --type "${a#*=}" >/dev/null
  done
  wait_for temporal 30 curl -fsS --max-time 2 "http://127.0.0.1:$TEMPORAL_UI_PORT/"
}

cmd_env() {
  cat <<EOF
export KUBECONFIG=$KUBECONFIG_FILE
export TEMPORAL_ADDRESS=127.0.0.1:$TEMPORAL_PORT
export TEMPORAL_NAMESPACE=$TEMPORAL_NAMESPACE
export TEMPORAL_UI_URL=http://127.0.0.1:$TEMPORAL_UI_PORT
export DRAINFLOW_KUBECTL=$K8S_BIN/kubectl
export DRAINFLOW_TEMPORAL_CLI=$TEMPORAL_BIN/temporal
export DRAINFLOW_TEMPORAL_TEST_SERVER=$TEMPORAL_BIN/temporal-test-server
export DRAINFLOW_KWOK_METRICS_URL=http://127.0.0.1:$KWOK_PORT/metrics
export DRAINFLOW_AUDIT_LOG=$AUDIT_DIR/audit.log
export DRAINFLOW_BENCH_KUBECONFIG_DRAINFLOW=$STATE/kubeconfig-bench-drainflow
export DRAINFLOW_BENCH_KUBECONFIG_KUBECTL=$STATE/kubeconfig-bench-kubectl
export PATH=$K8S_BIN:$TEMPORAL_BIN:\$PATH
EOF
}

cmd_up() {
  local nodes=3
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --nodes) nodes="$2"; shift 2 ;;
      --nodes=*) nodes="${1#*=}"; shift ;;
      *) die "unknown option for up: $1" ;;
    esac
  done
  [[ "$nodes" =~ ^[0-9]+$ ]] || die "--nodes must be a number, got '$nodes'"
  mkdir -p "$STATE" "$LOGS" "$RUN"
  bash "$HERE/build.sh"
  local t0=$SECONDS
  start_k8s
  ensure_nodes "$nodes"
  start_temporal
  log "up in $((SECONDS - t0))s"
  cat >&2 <<EOF
[stack] ready:
  kubeconfig:       $KUBECONFIG_FILE  (kubectl: $K8S_BIN/kubectl)
  Temporal:         127.0.0.1:$TEMPORAL_PORT, namespace $TEMPORAL_NAMESPACE
  Temporal UI:      http://127.0.0.1:$TEMPORAL_UI_PORT
  logs:             $LOGS
  use it:           eval "\$(npm run --silent stack -- env)"
EOF
}

COMPONENTS=(temporal kwok kube-scheduler kube-controller-manager kube-apiserver etcd)

cmd_status() {
  local c rc=0
  # Where this stack lives and listens: DRAINFLOW_STATE and the DRAINFLOW_*_PORT variables pick
  # another stack beside it (CONTRIBUTING.md, "The local stack").
  echo "state: $STATE"
  echo "ports: kube-apiserver $APISERVER_PORT, etcd $ETCD_PORT, Temporal $TEMPORAL_PORT (UI $TEMPORAL_UI_PORT, metrics $TEMPORAL_METRICS_PORT), kwok $KWOK_PORT"
  for c in "${COMPONENTS[@]}"; do
    if pid_alive "$c"; then printf '%-24s running (pid %s)\n' "$c" "$(cat "$RUN/$c.pid")"
    else printf '%-24s stopped\n' "$c"; rc=1; fi
  done
  if pid_alive kube-apiserver; then kubectl_ get nodes 2>&1 | sed 's/^/  /'; fi
  return $rc
}

cmd_down() {
  local c pid
  for c in "${COMPONENTS[@]}"; do
    [[ -f "$RUN/$c.pid" ]] || continue
    pid="$(cat "$RUN/$c.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -KILL -- "-$pid" 2>/dev/null || true
      log "$c: stopped"
    fi
    rm -f "$RUN/$c.pid"
  done
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  env) cmd_env ;;
  status) cmd_status ;;
  down) cmd_down ;;
  reset) cmd_down; rm -rf "$STATE"; log "state removed: $STATE" ;;
  build) shift; bash "$HERE/build.sh" "$@" ;;
  *) echo "usage: npm run stack -- up [--nodes N] | env | status | down | reset" >&2; exit 2 ;;
esac
