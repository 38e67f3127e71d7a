/**
 * The API requests of given users, read from the local stack's audit log (kube-apiserver's JSON
 * log backend, Metadata level: scripts/stack/audit-policy.yaml logs the bench users and drainflow's
 * two ServiceAccounts `system:serviceaccount:drainflow-system:drainflow-{operator,worker}`).
 *
 * Used by test/e2e/deploy.test.ts to derive the calls the RBAC must allow from what the code does.
 */
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** One request as the authorizer sees it (RBAC's attributes). */
export interface AuditedCall {
  user: string;
  /** RBAC verb: get, list, watch, create, update, patch, delete, deletecollection. */
  verb: string;
  /** API group; '' for the core group. */
  apiGroup: string;
  /** `resource` or `resource/subresource`. */
  resource: string;
  /** Namespace of a namespaced request; undefined for cluster-scoped and all-namespaces requests. */
  namespace?: string;
  /** Object name when the request names one (get, update, patch, delete; not create or list). */
  name?: string;
  /** HTTP status of the answer (a watch still open: the code of ResponseStarted). */
  code: number;
  /** True when the request asked for a dry run (`dryRun=All` in its URI): nothing was persisted. */
  dryRun?: boolean;
}

/** A position in the audit log, so that only what is written after it is read. */
export interface AuditMark {
  file: string;
  ino: number;
  size: number;
  atMs: number;
}

/** The audit log of the stack (`stack.sh env` exports DRAINFLOW_AUDIT_LOG), or undefined when not set. */
export function auditLogFile(): string | undefined {
  return process.env.DRAINFLOW_AUDIT_LOG || undefined;
}

/** Marks the current end of the audit log `file`. */
export function auditMark(file: string): AuditMark {
  const st = existsSync(file) ? statSync(file) : undefined;
  return { file, ino: st?.ino ?? -1, size: st?.size ?? 0, atMs: Date.now() };
}

/** The audit files, oldest first (the backend renames a full `audit.log` to `audit-<time>.log`). */
function auditFiles(file: string): string[] {
  const dir = dirname(file);
  if (!existsSync(dir)) return [];
  const base = basename(file).replace(/\.log$/, '');
  const rotated = readdirSync(dir)
    .filter((f) => f.startsWith(`${base}-`) && f.endsWith('.log'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  return [...rotated, ...(existsSync(file) ? [file] : [])];
}

interface AuditEvent {
  auditID?: string;
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
  };
  responseStatus?: { code?: number };
  requestURI?: string;
}

/**
 * The resource requests of `users` logged since `mark`, each request (auditID) once. Non-resource
 * requests (discovery, /version) are left out: RBAC's ClusterRole `system:discovery` allows them to
 * every authenticated user. Waits 500 ms first: the backend writes an event just before the answer.
 */
export async function auditedCalls(mark: AuditMark, users: readonly string[]): Promise<AuditedCall[]> {
  await new Promise((r) => setTimeout(r, 500));
  const wanted = new Set(users);
  const byId = new Map<string, AuditedCall>();
  const onLine = (line: string) => {
    if (!users.some((u) => line.includes(u))) return;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      return; // a line cut by rotation
    }
    const user = e.user?.username;
    if (!user || !wanted.has(user) || !e.auditID || !e.verb || !e.objectRef?.resource) return;
    if (byId.has(e.auditID) && e.stage !== 'ResponseComplete') return;
    const ref = e.objectRef;
    byId.set(e.auditID, {
      user,
      verb: e.verb,
      apiGroup: ref.apiGroup ?? '',
      resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource!,
      ...(ref.namespace ? { namespace: ref.namespace } : {}),
      ...(ref.name ? { name: ref.name } : {}),
      code: e.responseStatus?.code ?? 0,
      ...(/[?&]dryRun=All(&|$)/.test(e.requestURI ?? '') ? { dryRun: true } : {}),
    });
  };
  for (const f of auditFiles(mark.file)) {
    const st = statSync(f);
    let start: number;
    if (st.ino === mark.ino) start = Math.min(mark.size, st.size);
    else if (st.mtimeMs >= mark.atMs) start = 0;
    else continue;
    const rl = createInterface({ input: createReadStream(f, { start }), crlfDelay: Infinity });
    for await (const line of rl) onLine(line);
  }
  return [...byId.values()];
}
