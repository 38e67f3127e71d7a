/**
 * A memory sampler for drainflow processes under the bench; not part of the product.
 *
 * Preload it with `--require`, e.g.
 *   BENCH_DRAINFLOW_NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=1 \
 *     --require $PWD/bench/mem-sampler.cjs" MEM_SAMPLER_DIR=/tmp/mem npm run bench -- ...
 * Node runs preloaded modules in every worker thread too, so each V8 isolate of the process (the
 * main thread and the Temporal SDK's workflow thread) writes one JSON line per second
 * (MEM_SAMPLER_MS) to `$MEM_SAMPLER_DIR/<pid>-<threadId>.jsonl`:
 * - every thread: `t` (ms since epoch), its V8 heap (`v8.getHeapStatistics()`: total, used, limit,
 *   malloced, external; and the size of each heap space), in bytes;
 * - the main thread also: the process's `/proc/self/status` (VmRSS, VmHWM, RssAnon, RssFile,
 *   RssShmem, in kB), `process.memoryUsage()` (bytes), the number of threads, and the number of
 *   established TCP connections to the Kubernetes API server's port (`MEM_SAMPLER_APISERVER_PORT`,
 *   default the port of $KUBERNETES_SERVICE_PORT or none), which counts open watches plus the pooled
 *   request connections.
 * On demand, per thread, while it runs (create the file; each thread acts once per file and writes
 * its answer as a line `{ t, gc: {...} }` or `{ t, snapshot: path }`):
 * - `$MEM_SAMPLER_DIR/gc`: a full garbage collection, then the heap figures again (what is live);
 * - `$MEM_SAMPLER_DIR/snapshot`: a heap snapshot `<pid>-<threadId>.heapsnapshot` in that directory.
 * Nothing happens when MEM_SAMPLER_DIR is unset.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { isMainThread, threadId } = require('node:worker_threads');

const dir = process.env.MEM_SAMPLER_DIR;
if (dir) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}-${threadId}.jsonl`);
  const every = Number(process.env.MEM_SAMPLER_MS || 1000);
  const apiPort = Number(process.env.MEM_SAMPLER_APISERVER_PORT || 0);
  fs.appendFileSync(
    file,
    JSON.stringify({
      start: Date.now(),
      pid: process.pid,
      threadId,
      main: isMainThread,
      argv: process.argv,
    }) + '\n',
  );

  /** kB figures of /proc/self/status. */
  const status = () => {
    const out = {};
    const text = fs.readFileSync('/proc/self/status', 'utf8');
    for (const key of ['VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'RssShmem', 'Threads']) {
      const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
      if (m) out[key] = Number(m[1]);
    }
    return out;
  };

  /** Established TCP connections of this process to 127.0.0.1/any:`port`. */
  const connections = (port) => {
    if (!port) return undefined;
    const inodes = new Set();
    for (const fd of fs.readdirSync('/proc/self/fd')) {
      try {
        const link = fs.readlinkSync(`/proc/self/fd/${fd}`);
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m) inodes.add(m[1]);
      } catch {
        // fd closed meanwhile
      }
    }
    let n = 0;
    for (const table of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
      let text;
      try {
        text = fs.readFileSync(table, 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length < 10) continue;
        const remPort = parseInt(f[2].split(':')[1], 16);
        if (f[3] === '01' && remPort === port && inodes.has(f[9])) n++;
      }
    }
    return n;
  };

  const sample = () => {
    const h = v8.getHeapStatistics();
    const rec = {
      t: Date.now(),
      heap: {
        total: h.total_heap_size,
        used: h.used_heap_size,
        limit: h.heap_size_limit,
        malloced: h.malloced_memory,
        external: h.external_memory,
        contexts: h.number_of_native_contexts,
      },
      spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size])),
    };
    if (isMainThread) {
      rec.status = status();
      rec.mem = process.memoryUsage();
      rec.apiConns = connections(apiPort);
    }
    fs.appendFileSync(file, JSON.stringify(rec) + '\n');
  };
  /** mtime of each trigger file this thread last acted on. */
  const done = { gc: 0, snapshot: 0 };
  const triggered = (name) => {
    let mtime;
    try {
      mtime = fs.statSync(path.join(dir, name)).mtimeMs;
    } catch {
      return false;
    }
    if (mtime === done[name]) return false;
    done[name] = mtime;
    return true;
  };
  const onDemand = () => {
    if (triggered('gc')) {
      v8.setFlagsFromString('--expose-gc');
      vm.runInNewContext('gc')();
      const h = v8.getHeapStatistics();
      const rec = { t: Date.now(), gc: { total: h.total_heap_size, used: h.used_heap_size } };
      if (isMainThread) rec.status = status();
      fs.appendFileSync(file, JSON.stringify(rec) + '\n');
    }
    if (triggered('snapshot')) {
      const snap = v8.writeHeapSnapshot(path.join(dir, `${process.pid}-${threadId}.heapsnapshot`));
      fs.appendFileSync(file, JSON.stringify({ t: Date.now(), snapshot: snap }) + '\n');
    }
  };
  // Trigger files older than the start do not count.
  for (const name of Object.keys(done)) triggered(name);
  setInterval(() => {
    sample();
    onDemand();
  }, every).unref();
}
