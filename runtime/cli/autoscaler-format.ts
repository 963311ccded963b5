import type { AutoscalerStatusReply } from '../../protocols/messages/autoscaling.ts';

/**
 * The autoscaler's part of `orrery status`, as `ray status` shows it: when it last reported, its
 * node types (live / launching / min / max), the launches whose node has not registered yet, the
 * demands it acts on with what it launches for each, the demands no node type can take and why,
 * and its recent launch failures.
 *
 *   Autoscaler (reported 2s ago)
 *     Node types:
 *       cpu  live 1  launching 0  min 1  max 4
 *       gpu  live 0  launching 1  min 0  max 2
 *     Pending launches:
 *       gpu-1a2b (gpu), requested 5s ago
 *     Demands:
 *       2 × {CPU: 1} labelSelector {type: gpu}: launching 1 gpu
 *     Infeasible demands:
 *       1 × {GPU: 8}: no node type has 8 GPU
 *     Recent failures:
 *       gpu: launch command exited 1 (40s ago, retry in 20s)
 *
 * Every time is shown relative to the status: the autoscaler's own clock (`status.time`, `since`,
 * `time`, `retryAt`) plus how long ago the GCS received it (`ageMs`), so the two clocks are never
 * compared.
 */
export function autoscalerLines(reply: AutoscalerStatusReply): string[] {
  const { status } = reply;
  if (status === null) return ['Autoscaler: not running'];
  const age = reply.ageMs ?? 0;
  /** How long before now the autoscaler's time `t` was. */
  const ago = (t: number): number => status.time - t + age;
  const out = [`Autoscaler (reported ${duration(age)} ago)`];
  out.push('  Node types:');
  if (status.nodeTypes.length === 0) out.push('    (none)');
  const width = Math.max(0, ...status.nodeTypes.map((t) => t.name.length));
  for (const t of status.nodeTypes) out.push(`    ${t.name.padEnd(width)}  live ${t.live}  launching ${t.launching}  min ${t.minWorkers}  max ${t.maxWorkers}`);
  out.push('  Pending launches:');
  if (status.launching.length === 0) out.push('    (none)');
  for (const l of status.launching) out.push(`    ${l.name} (${l.type}), requested ${duration(ago(l.since))} ago`);
  out.push('  Demands:');
  if (status.demands.length === 0) out.push('    (none)');
  for (const d of status.demands) {
    const launch = d.launch?.filter((l) => l.count > 0) ?? [];
    out.push(`    ${d.count} × ${d.description}: ${launch.length ? `launching ${launch.map((l) => `${l.count} ${l.type}`).join(', ')}` : 'no launch'}`);
  }
  if (status.infeasible.length > 0) {
    out.push('  Infeasible demands:');
    for (const d of status.infeasible) out.push(`    ${d.count} × ${d.description}: ${d.reason}`);
  }
  out.push('  Recent failures:');
  if (status.failures.length === 0) out.push('    (none)');
  for (const f of status.failures) {
    const retry = f.retryAt === undefined ? '' : ago(f.retryAt) < 0 ? `, retry in ${duration(-ago(f.retryAt))}` : ', retrying';
    out.push(`    ${f.type}: ${f.message} (${duration(ago(f.time))} ago${retry})`);
  }
  return out;
}

/** 0s, 42s, 3m 5s, 2h 10m. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
