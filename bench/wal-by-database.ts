// WAL bytes one database wrote between two LSNs, read back with pg_waldump: the server's
// own counter (pg_current_wal_lsn) is cluster-wide, and on a shared machine other
// databases' writes swamp a per-settlement figure.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const RECORD = /^rmgr: \S+\s+len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+), lsn: \S+, prev \S+, desc: (.*)$/;

/**
 * Sums the records that touch a relation of database `oid`, plus every record of a
 * transaction that did (its commit record, for one). Null when pg_waldump cannot read
 * the range (not run as root or postgres, or the segments were recycled).
 */
export async function walBytesOfDatabase(
  walDir: string,
  oid: number,
  from: string,
  to: string,
): Promise<number | null> {
  const binary = process.env.PG_WALDUMP ?? '/usr/lib/postgresql/15/bin/pg_waldump';
  const child = spawn(binary, ['-p', walDir, '-s', from, '-e', to], { stdio: ['ignore', 'pipe', 'ignore'] });
  const marker = `/${oid}/`;
  const byTransaction = new Map<number, number>();
  const ours = new Set<number>();
  let direct = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    const match = RECORD.exec(line);
    if (!match) continue;
    const bytes = Number(match[1]);
    const tx = Number(match[2]);
    const touches = match[3]!.includes(marker);
    if (tx === 0) {
      if (touches) direct += bytes;
      continue;
    }
    byTransaction.set(tx, (byTransaction.get(tx) ?? 0) + bytes);
    if (touches) ours.add(tx);
  }
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0 && byTransaction.size === 0 && direct === 0) return null;
  let total = direct;
  for (const tx of ours) total += byTransaction.get(tx) ?? 0;
  return total;
}
