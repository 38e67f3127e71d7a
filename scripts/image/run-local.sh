#!/usr/bin/env bash
# Runs the image built by scripts/image/build-local.sh with podman against the local stack, as a
# deployed pod would: uid 65532, read-only root filesystem with a tmpfs /tmp, no capabilities, the
# ServiceAccounts' own tokens (deploy/default's namespace, ServiceAccounts and RBAC are applied),
# then drains one kwok node through the containers: the operator (with a plan selector and a
# private task queue) starts the plan's workflow, the worker drains the node; it prints the plan,
# removes everything it created but the RBAC of deploy/default, and exits 0 when the plan was Drained.
#
# Usage (with the stack's environment: eval "$(npm run --silent stack -- env)"):
#   scripts/image/run-local.sh
# Environment: IMAGE (default localhost/drainflow:dev), PODMAN_RUNTIME (default runc),
# PODMAN_ULIMITS (default "--ulimit nofile=4096:4096 --ulimit nproc=4096:4096": in sandboxes
# without CAP_SYS_RESOURCE podman's defaults, which raise both, are refused).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IMAGE="${IMAGE:-localhost/drainflow:dev}"
RUNTIME="${PODMAN_RUNTIME:-runc}"
read -r -a ULIMITS <<< "${PODMAN_ULIMITS:---ulimit nofile=4096:4096 --ulimit nproc=4096:4096}"
: "${KUBECONFIG:?set KUBECONFIG: eval \"\$(npm run --silent stack -- env)\"}"
: "${TEMPORAL_ADDRESS:?set TEMPORAL_ADDRESS: eval \"\$(npm run --silent stack -- env)\"}"
KUBECTL="${KUBECTL:-kubectl}"
NS=drainflow-system
RUN="img$(date +%s)"
WORK="$(mktemp -d)"
log() { echo "[image-run] $*" >&2; }
k() { "$KUBECTL" "$@"; }

cleanup() {
  set +e
  # The plan first, while the operator runs: it aborts the workflow, which hands the node back.
  k delete mp "df-$RUN" --timeout=60s >/dev/null 2>&1 ||
    k patch mp "df-$RUN" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
  for c in "df-$RUN-operator" "df-$RUN-worker"; do podman rm -f -t 10 "$c" >/dev/null 2>&1; done
  k delete ns "df-$RUN" --wait=false >/dev/null 2>&1
  k delete node "df-$RUN-node" --wait=false >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

# 1. The CRD, namespace, ServiceAccounts and RBAC of deploy/default (no Deployments: the containers
#    run here instead), and a kubeconfig per ServiceAccount with its own token.
k kustomize "$ROOT/deploy/default" > "$WORK/default.yaml"
node -e '
  const { parseAllDocuments } = require(process.argv[1] + "/node_modules/yaml");
  const keep = new Set(["CustomResourceDefinition", "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);
  const text = require("node:fs").readFileSync(process.argv[2], "utf8");
  const items = parseAllDocuments(text).map((d) => d.toJS()).filter((d) => d && keep.has(d.kind));
  console.log(JSON.stringify({ apiVersion: "v1", kind: "List", items }));
' "$ROOT" "$WORK/default.yaml" > "$WORK/identities.json"
k apply --server-side -f "$WORK/identities.json" >/dev/null
server="$(k config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')"
k config view --minify --raw --flatten -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$WORK/ca.crt"
for sa in operator worker; do
  token="$(k -n "$NS" create token "drainflow-$sa" --duration=1h)"
  KUBECONFIG="$WORK/$sa.kubeconfig" k config set-cluster stack --server="$server" \
    --certificate-authority="$WORK/ca.crt" --embed-certs=true >/dev/null
  KUBECONFIG="$WORK/$sa.kubeconfig" k config set-credentials "$sa" --token="$token" >/dev/null
  KUBECONFIG="$WORK/$sa.kubeconfig" k config set-context "$sa" --cluster=stack --user="$sa" >/dev/null
  KUBECONFIG="$WORK/$sa.kubeconfig" k config use-context "$sa" >/dev/null
  chmod 0644 "$WORK/$sa.kubeconfig" # read by uid 65532 in the container
done

# 2. The operator and the worker containers.
selector="drainflow.dev/image-run=$RUN"
queue="df-$RUN"
start() { # component port
  podman --runtime "$RUNTIME" run -d --name "df-$RUN-$1" "${ULIMITS[@]}" \
    --network host --user 65532:65532 --read-only --tmpfs /tmp:rw,size=64m --cap-drop ALL \
    --security-opt no-new-privileges \
    -v "$WORK/$1.kubeconfig:/etc/drainflow/kubeconfig:ro" \
    -e KUBECONFIG=/etc/drainflow/kubeconfig -e TEMPORAL_ADDRESS="$TEMPORAL_ADDRESS" \
    -e TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}" -e DRAINFLOW_TASK_QUEUE="$queue" \
    -e POD_NAME="df-$RUN-$1" -e POD_NAMESPACE="$NS" -e DRAINFLOW_PLAN_SELECTOR="$selector" \
    -e "DRAINFLOW_$(tr a-z A-Z <<< "$1")_PORT=$2" \
    "$IMAGE" run "--$1" --mode local >/dev/null
  for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$2/readyz" >/dev/null 2>&1 && { log "$1 container ready on :$2"; return; }
    [[ "$(podman inspect -f '{{.State.Running}}' "df-$RUN-$1")" == true ]] || break
    sleep 1
  done
  podman logs --tail 40 "df-$RUN-$1" >&2; log "$1 container not ready"; exit 1
}
port() { node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
wport="$(port)"; oport="$(port)"
start worker "$wport"
start operator "$oport"
log "user in the container: $(podman exec "df-$RUN-worker" /nodejs/bin/node -e 'console.log(process.getuid() + ":" + process.getgid())')"

# 3. A kwok node with one pod, and a plan for it.
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: df-$RUN-node
  labels: { type: kwok, kubernetes.io/hostname: df-$RUN-node, kubernetes.io/os: linux, kubernetes.io/arch: amd64 }
  annotations: { kwok.x-k8s.io/node: fake }
spec:
  taints: [{ key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule }]
---
apiVersion: v1
kind: Namespace
metadata: { name: df-$RUN }
YAML
k -n "df-$RUN" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 1
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      nodeSelector: { kubernetes.io/hostname: df-$RUN-node }
      tolerations: [{ key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule }]
      containers: [{ name: web, image: fake }]
YAML
k -n "df-$RUN" wait --for=condition=Available deploy/web --timeout=90s >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: maintenance.drainflow.dev/v1alpha1
kind: MaintenancePlan
metadata: { name: df-$RUN, labels: { drainflow.dev/image-run: "$RUN" } }
spec: { nodeNames: [df-$RUN-node], drainTimeoutSeconds: 300 }
YAML
log "plan df-$RUN created; waiting for Drained"
phase=""
for _ in $(seq 1 120); do
  phase="$(k get mp "df-$RUN" -o jsonpath='{.status.phase}')"
  [[ "$phase" == Drained || "$phase" == Failed || "$phase" == Blocked ]] && break
  sleep 1
done
k get mp "df-$RUN" -o wide
curl -fsS "http://127.0.0.1:$wport/metrics" | grep '^drainflow_evictions_total' || true
if podman logs "df-$RUN-worker" 2>&1 | grep -qi forbidden || podman logs "df-$RUN-operator" 2>&1 | grep -qi forbidden; then
  log "a call was refused (forbidden) — see podman logs"; exit 1
fi
[[ "$phase" == Drained ]] || { podman logs --tail 40 "df-$RUN-worker" >&2; log "plan ended $phase"; exit 1; }
log "drained df-$RUN-node through the image ($IMAGE) as uid 65532"
