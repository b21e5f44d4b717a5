import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { postgresRecoveryRepository } from '../adapters/recovery-repository';
import { postgresTakeoverUnitOfWork } from '../adapters/takeover-unit-of-work';
import { createDatabase, createPool } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import type { Actor } from '../domain/actor';
import { evidenceDigestHex, snapshotEvidenceDigestHex, type EvidenceDigestInput } from '../domain/recovery';
import { confirmTakeover } from '../services/confirm-takeover';
import { proposeRecovery } from '../services/propose-recovery';
import type { RecoveryServiceDeps } from '../services/recovery-common';

/**
 * Microseconds below the millisecond of the rows the check writes
 * (the rounding cases of docs/design.md#runtime-timestamps).
 */
export const SUB_MILLISECOND_OFFSETS_US = [0, 300, 500, 700] as const;

export interface DigestCheckRow {
  executionId: number;
  offsetUs: number;
  /** `(extract(epoch from updated_at) * 1000)::bigint`: the runtime's reading. */
  runtimeMs: number;
  /** `date_trunc('milliseconds', ...)`: the reading Keel used before. */
  truncatedMs: number;
  runtimeDigest: string;
  truncatedDigest: string;
  /** What Keel's snapshot read computes now. */
  keelSnapshotDigest: string;
  /** What Keel stored on the proposal and wrote into ob_recovery_decision. */
  proposalDigest: string;
  decisionDigest: string;
}

export interface DigestCheckReport {
  rows: DigestCheckRow[];
  /** Keel's digests (snapshot, proposal, decision) equal to the runtime-expression digest. */
  agreeing: number;
  /** The truncating reading's digests equal to the runtime-expression digest (the old behaviour). */
  truncatedAgreeing: number;
}

const actorOf = (login: string, role: 'operator' | 'approver'): Actor => ({
  id: `user:${login}`,
  login,
  name: login,
  role,
});

/** Applies the runtime's own migration files in name order, each in its own transaction, as its migrator does. */
async function applyRuntimeMigrations(client: pg.Client, directory: string): Promise<string[]> {
  const files = readdirSync(directory)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  if (files.length === 0) throw new Error(`no .sql files in ${directory}`);
  await client.query('create schema oxide_batch');
  for (const file of files) {
    await client.query('begin');
    try {
      await client.query(readFileSync(join(directory, file), 'utf8'));
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return files;
}

/**
 * Builds a database from the runtime's migrations (a directory of its `migrations/*.sql`,
 * never copied into Keel), writes stale executions whose `updated_at` lies 0, 300, 500
 * and 700 microseconds past a millisecond, and compares every evidence digest Keel
 * computes, stores on a proposal and writes into `ob_recovery_decision` with the digest
 * over the runtime's own SQL reading of the same row.
 */
export async function checkRuntimeDigests(
  adminUrl: string,
  migrationsDir: string,
): Promise<DigestCheckReport & { migrations: string[] }> {
  const name = `keel_digest_check_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 4);
  try {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    let migrations: string[];
    try {
      migrations = await applyRuntimeMigrations(client, migrationsDir);
    } finally {
      await client.end();
    }
    const migrated = await migrateDatabase(pool);
    if (!migrated.ok) throw new Error(`Keel refused the runtime's schema: ${JSON.stringify(migrated.error)}`);

    const manifest = { job_name: 'digest-check', delivery_mode: 'atomic_same_resource', steps: [] };
    const digest = createHash('sha256').update(JSON.stringify(manifest)).digest();
    const definitionId = Number(
      (
        await pool.query(
          `insert into oxide_batch.ob_job_definition (job_name, definition_revision, manifest_format, manifest_digest,
           manifest, registered_at)
           values ('digest-check', 'r1', 1, $1, $2, date_trunc('milliseconds', clock_timestamp()) - interval '2 days')
           returning id`,
          [digest, JSON.stringify(manifest)],
        )
      ).rows[0].id,
    );
    const db = createDatabase(pool);
    const deps: RecoveryServiceDeps = {
      unitOfWork: postgresTakeoverUnitOfWork(db, { checkpointKey: randomBytes(32) }),
      clock: {
        wallMs: () => Date.now(),
        monotonicMs: () => performance.now(),
        lastServerTimeMs: () => null,
        observeServerTime: () => {},
      },
      settings: {
        staleThresholdMs: 60_000,
        maxClockSkewMs: 5_000,
        proposalTtlMs: 900_000,
        orchestrationLeaseMs: 300_000,
      },
      ownerToken: randomBytes(16),
    };
    const repository = postgresRecoveryRepository(db);
    const rows: DigestCheckRow[] = [];
    for (const offsetUs of SUB_MILLISECOND_OFFSETS_US) {
      const instance = Number(
        (
          await pool.query(
            `insert into oxide_batch.ob_job_instance (job_name, instance_key, identifying_parameters, created_at)
             values ('digest-check', $1, '{}', date_trunc('milliseconds', clock_timestamp()) - interval '1 day')
             returning id`,
            [randomBytes(32)],
          )
        ).rows[0].id,
      );
      // An hour ago, on a whole second, plus the offset: a row a stale worker left.
      const { rows: inserted } = await pool.query(
        `with t as (select date_trunc('second', clock_timestamp()) - interval '1 hour' + $3::int * interval
         '1 microsecond' as at)
         insert into oxide_batch.ob_job_execution (job_instance_id, definition_id, attempt, status, exit_code,
         parameters,
           context_format, context_schema, context_schema_version, context_payload, created_at, started_at, updated_at,
           version, owner_token)
         select $1, $2, 1, 'STARTED', 'EXECUTING', '{}', 1, 'oxide-batch.context', 1, '{}', t.at - interval '1 hour',
         t.at - interval '1 hour', t.at, 5, $4
         from t returning id`,
        [instance, definitionId, offsetUs, randomBytes(16)],
      );
      const executionId = Number(inserted[0].id);
      const read = (
        await pool.query(
          `select status, attempt, version, (extract(epoch from updated_at) * 1000)::bigint as runtime_ms,
                  round(extract(epoch from date_trunc('milliseconds', updated_at)) * 1000)::bigint as truncated_ms
           from oxide_batch.ob_job_execution where id = $1`,
          [executionId],
        )
      ).rows[0];
      const base: EvidenceDigestInput = {
        id: executionId,
        status: read.status,
        attempt: Number(read.attempt),
        version: Number(read.version),
        owner: 'OTHER_PROCESS',
        updatedAtMs: Number(read.runtime_ms),
        step: null,
        markers: {
          unknownCommit: false,
          completedPartition: false,
          committedFlowDecision: false,
          ambiguousExternalEffect: false,
        },
      };
      const runtimeDigest = evidenceDigestHex(base);
      const truncatedDigest = evidenceDigestHex({ ...base, updatedAtMs: Number(read.truncated_ms) });
      const snapshot = await repository.recoverySnapshot(executionId, deps.ownerToken);
      if (!snapshot.ok) throw new Error(`snapshot of ${executionId}: ${snapshot.error.kind}`);
      const keelSnapshotDigest = snapshotEvidenceDigestHex(snapshot.value);
      if (!runtimeDigest.ok || !truncatedDigest.ok || !keelSnapshotDigest.ok)
        throw new Error(`digest of ${executionId} is malformed`);
      const proposed = await proposeRecovery(deps, actorOf('digest-check-operator', 'operator'), {
        target: 'batch',
        executionId,
        reason: 'digest check',
      });
      if (!proposed.ok) throw new Error(`propose ${executionId}: ${proposed.error.code}`);
      const proposal = proposed.value.proposal;
      const confirmed = await confirmTakeover(deps, actorOf('digest-check-approver', 'approver'), {
        proposalId: proposal.id,
        evidenceDigest: proposal.evidenceDigestHex,
        expectedVersion: proposal.expectedVersion,
        resultingStatus: 'FAILED',
      });
      if (!confirmed.ok) throw new Error(`confirm ${executionId}: ${confirmed.error.code}`);
      const decision = (
        await pool.query(
          `select encode(evidence_digest, 'hex') as digest from oxide_batch.ob_recovery_decision
           where job_execution_id = $1`,
          [executionId],
        )
      ).rows[0];
      rows.push({
        executionId,
        offsetUs,
        runtimeMs: Number(read.runtime_ms),
        truncatedMs: Number(read.truncated_ms),
        runtimeDigest: runtimeDigest.value,
        truncatedDigest: truncatedDigest.value,
        keelSnapshotDigest: keelSnapshotDigest.value,
        proposalDigest: proposal.evidenceDigestHex,
        decisionDigest: decision?.digest ?? '',
      });
    }
    const agree = (row: DigestCheckRow) =>
      row.keelSnapshotDigest === row.runtimeDigest &&
      row.proposalDigest === row.runtimeDigest &&
      row.decisionDigest === row.runtimeDigest;
    return {
      migrations,
      rows,
      agreeing: rows.filter(agree).length,
      truncatedAgreeing: rows.filter((row) => row.truncatedDigest === row.runtimeDigest).length,
    };
  } finally {
    await pool.end();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

export function formatDigestCheck(report: DigestCheckReport & { migrations: string[] }): string {
  const lines = [`runtime migrations applied: ${report.migrations.join(', ')}`];
  for (const row of report.rows) {
    const same =
      row.keelSnapshotDigest === row.runtimeDigest &&
      row.proposalDigest === row.runtimeDigest &&
      row.decisionDigest === row.runtimeDigest;
    lines.push(
      `execution ${row.executionId}: +${row.offsetUs} us  runtime ${row.runtimeMs} ms, ` +
        `truncated ${row.truncatedMs} ms  ` +
        `keel ${same ? 'AGREES' : 'DIFFERS'} (snapshot, proposal, ` +
        `decision)  truncated reading ${row.truncatedDigest === row.runtimeDigest ? 'agrees' : 'differs'}`,
    );
  }
  lines.push(`Keel's digests agree with the runtime's on ${report.agreeing} of ${report.rows.length} rows`);
  lines.push(`the truncating reading would agree on ${report.truncatedAgreeing} of ${report.rows.length} rows`);
  return `${lines.join('\n')}\n`;
}
