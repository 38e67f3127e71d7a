/**
 * Plain-text rendering of a preflight report (`drainflow preflight`, and `drainflow status` of a
 * Preflight plan): the summary, each node (blockers first) with its pods to evict, blockers,
 * workloads whose pods would come back, dry-run refusals and skipped pods (as capped in the report, with "and N more"), then the
 * PodDisruptionBudgets and the rounds each needs. Pure.
 */
import type { PreflightNode, PreflightReport } from '../api/preflight.js';

function nodeLines(n: PreflightNode): string[] {
  const lines: string[] = [];
  const flags = n.unschedulable ? ' (already cordoned)' : '';
  lines.push(`node ${n.name}${flags}`);
  if (n.error) {
    lines.push(`  could not be examined: ${n.error}`);
    return lines;
  }
  lines.push(
    `  ${n.podsToEvict} to evict, ${n.podsSkipped} skipped, ${n.blockerCount} blocker(s) on ${n.podsBlocked} pod(s); ` +
      `dry-run evictions ${n.dryRunAccepted} accepted, ${n.dryRunRefused} refused`,
  );
  const more = (shown: number, total: number) => (total > shown ? [`    … and ${total - shown} more`] : []);
  if (n.evict?.length) {
    lines.push('  to evict:');
    for (const e of n.evict)
      lines.push(
        `    ${e.pod}${e.pdbs ? ` (PDB ${e.pdbs.join(', ')})` : ''}${e.dryRun ? ` dry-run ${e.dryRun}` : ''}` +
          (e.pdbExempt ? ` (no PDB check: ${e.pdbExempt})` : '') +
          (e.returns ? ` warning ReturnsToNode: ${e.returns}, may come back after its eviction` : ''),
      );
    lines.push(...more(n.evict.length, n.podsToEvict));
  }
  if (n.returning?.length) {
    lines.push('  would come back to the node after their eviction (warning, ReturnsToNode):');
    for (const w of n.returning) lines.push(`    ${w.reason}: ${w.message}`);
  }
  if (n.ownersUnread)
    lines.push(
      `  ${n.ownersUnread} controller(s) not read: their pod templates were not checked for spec.nodeName`,
    );
  if (n.blockers?.length) {
    lines.push('  blockers:');
    for (const b of n.blockers)
      lines.push(`    ${b.reason}${b.kind ? ` ${b.kind}` : ''}${b.pod ? ` ${b.pod}` : ''}: ${b.message}`);
    lines.push(...more(n.blockers.length, n.blockerCount));
  }
  if (n.dryRunRefusals?.length) {
    lines.push('  refused by the API server (dry run):');
    for (const r of n.dryRunRefusals)
      lines.push(
        `    ${r.pod}: ${r.code ?? 'no answer'} ${r.reason}${r.pdb ? ` (${r.pdb})` : ''}: ${r.message}`,
      );
    lines.push(...more(n.dryRunRefusals.length, n.dryRunRefused));
  }
  if (n.skipped?.length) {
    lines.push('  skipped:');
    for (const s of n.skipped) lines.push(`    ${s.pod}: ${s.reason}: ${s.message}`);
    lines.push(...more(n.skipped.length, n.podsSkipped));
  }
  return lines;
}

/** The report as text: the summary, each node (blockers first), then the PodDisruptionBudgets and their rounds. */
export function renderPreflight(r: PreflightReport): string {
  const lines = [`preflight: ${r.summary}`];
  for (const n of r.nodes) lines.push(...nodeLines(n));
  if (r.nodesExamined > r.nodes.length) lines.push(`… and ${r.nodesExamined - r.nodes.length} more node(s)`);
  if (r.pdbs?.length) {
    lines.push('PodDisruptionBudgets:');
    for (const p of r.pdbs)
      lines.push(`  ${p.pdb}: ${p.rounds !== undefined ? `${p.rounds} round(s)` : 'blocked'}: ${p.message}`);
  }
  return lines.join('\n');
}
