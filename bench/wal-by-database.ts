// WAL bytes one database wrote between two LSNs, read back with pg_waldump: the server's
// own counter (pg_current_wal_lsn) is cluster-wide, and on a shared machine other
// databases' writes swamp a per-settlement figure.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const RECORD = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*\d+\/\s*(\d+), tx:\s*(\d+), lsn: \S+, prev \S+, desc: (.*)$/;

/** Bytes and records by `rmgr record relfilenode` (the relfilenode `-` for a record that names none). */
export type WalDetail = Map<string, { bytes: number; records: number }>;

const RELATION = /rel \d+\/\d+\/(\d+)/;

/**
 * Sums the records that touch a relation of database `oid`, plus every record of a
 * transaction that did (its commit record, for one). Null when pg_waldump cannot read
 * the range (not run as root or postgres, or the segments were recycled). With `detail`,
 * also adds each such record to it by kind and relation.
 */
export async function walBytesOfDatabase(
  walDir: string,
  oid: number,
  from: string,
  to: string,
  detail?: WalDetail,
): Promise<number | null> {
  const binary = process.env.PG_WALDUMP ?? '/usr/lib/postgresql/15/bin/pg_waldump';
  const child = spawn(binary, ['-p', walDir, '-s', from, '-e', to], { stdio: ['ignore', 'pipe', 'ignore'] });
  const marker = `/${oid}/`;
  const byTransaction = new Map<number, number>();
  // With detail: each transaction's records by key, added to it once the transaction is known to be ours.
  const keysByTransaction = new Map<number, [string, number][]>();
  const ours = new Set<number>();
  let direct = 0;
  const add = (key: string, bytes: number) => {
    const entry = detail!.get(key) ?? { bytes: 0, records: 0 };
    entry.bytes += bytes;
    entry.records += 1;
    detail!.set(key, entry);
  };
  for await (const line of createInterface({ input: child.stdout })) {
    const match = RECORD.exec(line);
    if (!match) continue;
    const bytes = Number(match[2]);
    const tx = Number(match[3]);
    const desc = match[4]!;
    const touches = desc.includes(marker);
    const key = detail ? `${match[1]} ${desc.split(/[ :]/, 1)[0]} ${RELATION.exec(desc)?.[1] ?? '-'}` : '';
    if (tx === 0) {
      if (touches) {
        direct += bytes;
        if (detail) add(key, bytes);
      }
      continue;
    }
    byTransaction.set(tx, (byTransaction.get(tx) ?? 0) + bytes);
    if (detail) {
      const keys = keysByTransaction.get(tx);
      if (keys) keys.push([key, bytes]);
      else keysByTransaction.set(tx, [[key, bytes]]);
    }
    if (touches) ours.add(tx);
  }
  if (detail) for (const tx of ours) for (const [key, bytes] of keysByTransaction.get(tx) ?? []) add(key, bytes);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0 && byTransaction.size === 0 && direct === 0) return null;
  let total = direct;
  for (const tx of ours) total += byTransaction.get(tx) ?? 0;
  return total;
}
