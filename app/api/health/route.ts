import { readRuntimeSchemaState, REQUIRED_RUNTIME_SCHEMA_VERSION } from '@/lib/db/runtime-schema';
import { runtime } from '@/lib/server/composition-root';

export const dynamic = 'force-dynamic';

/**
 * Process, database and schema status; no sign-in, no secrets. It reads through its
 * own two-connection pool with 2-second timeouts, so it answers (ok or down) within
 * seconds even when every request connection is taken.
 */
export async function GET() {
  const started = performance.now();
  const { healthPool: pool, startedAt, replica } = runtime();
  const replicaState = replica?.monitor.state();
  // Where list pages read from: the primary, or the replica while it is usable.
  const reads = !replicaState
    ? { source: 'primary', replica: 'none' }
    : replicaState.usable
      ? { source: 'replica', lagMs: replicaState.lagMs }
      : { source: 'primary', replica: replicaState.reason, lagMs: replicaState.lagMs };
  const process = { status: 'ok', uptimeSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000) };
  try {
    const state = await readRuntimeSchemaState(pool);
    const migrations = await pool.query<{ count: number }>(
      'select count(*)::int as count from keel.__drizzle_migrations',
    );
    const runtimeVersion = state.kind === 'versioned' ? state.version : null;
    const schemaOk = runtimeVersion !== null && runtimeVersion >= REQUIRED_RUNTIME_SCHEMA_VERSION;
    const body = {
      status: schemaOk ? 'ok' : 'degraded',
      process,
      database: { status: 'ok', latencyMs: Math.round(performance.now() - started) },
      reads,
      schema: {
        oxideBatch: { state: state.kind, version: runtimeVersion, required: REQUIRED_RUNTIME_SCHEMA_VERSION },
        keel: { migrationsApplied: migrations.rows[0]?.count ?? 0 },
      },
    };
    return Response.json(body, { status: schemaOk ? 200 : 503, headers: { 'Cache-Control': 'no-store' } });
  } catch {
    return Response.json(
      { status: 'down', process, database: { status: 'unreachable' } },
      { status: 503, headers: { 'Cache-Control': 'no-store' } },
    );
  }
}
