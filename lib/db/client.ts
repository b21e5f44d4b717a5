import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from './schema';

export type Database = NodePgDatabase<typeof schema>;
/** What an adapter takes: the database or an open transaction. */
export type DbOrTx = Database | Parameters<Parameters<Database['transaction']>[0]>[0];

// bigint columns come back as strings by default; ids and versions here stay well below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Every connection of the pool was busy for the whole acquire timeout: the caller answers 503, not 500. */
export class DatabaseBusyError extends Error {
  override readonly name = 'DatabaseBusyError';
  constructor(readonly waitedMs: number) {
    super(`no database connection became free within ${waitedMs} ms`);
  }
}

/** True when `error` or one of its causes (drizzle wraps the driver's error) is a DatabaseBusyError. */
export function isDatabaseBusy(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current instanceof DatabaseBusyError) return true;
  }
  return false;
}

// pg-pool's own words when a waiter's connectionTimeoutMillis runs out in the queue.
const POOL_QUEUE_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * A pool. `options` adds pg settings: `connectionTimeoutMillis` bounds the wait for a
 * free connection (a timeout becomes a DatabaseBusyError), and `statement_timeout` or
 * `idle_in_transaction_session_timeout` are sent as session settings of every connection.
 */
/**
 * What every connection of Keel's pools sets: no JIT and no parallel workers. Every statement
 * Keel sends is a short keyset read or a small write. A planner estimate over a range only
 * known at run time (the lease grants' ranges) could otherwise spend 100 ms compiling a
 * statement that runs in a tenth of a millisecond. And at ten million rows some list reads
 * were planned with a worker, whose start alone took 7.7 ms of a 16 ms read and doubled its
 * machine CPU (docs/performance.md).
 */
export const STATEMENT_SETTINGS = '-c jit=off -c max_parallel_workers_per_gather=0';

export function createPool(
  connectionString: string,
  max = 10,
  options: Omit<pg.PoolConfig, 'connectionString' | 'max'> = {},
): pg.Pool {
  const startup = [STATEMENT_SETTINGS, options.options].filter(Boolean).join(' ');
  const pool = new pg.Pool({ application_name: 'keel', ...options, options: startup, connectionString, max });
  // An idle client's error (server restart) must not crash the process.
  pool.on('error', () => {});
  // Nor a checked-out one's between two queries (pg-pool listens only while a client is
  // idle): its next query fails instead, and the release discards it.
  pool.on('connect', (client) => client.on('error', () => {}));
  if (options.connectionTimeoutMillis) {
    const waitedMs = options.connectionTimeoutMillis;
    const typed = (error: Error) => (error.message === POOL_QUEUE_TIMEOUT ? new DatabaseBusyError(waitedMs) : error);
    const connect = pool.connect.bind(pool) as (
      callback?: (error: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void,
    ) => Promise<pg.PoolClient> | undefined;
    // pool.query() checks out through this.connect, so both paths get the typed error.
    pool.connect = ((
      callback?: (error: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void,
    ) => {
      if (callback) return connect((error, client, done) => callback(error ? typed(error) : error, client, done));
      return (connect() as Promise<pg.PoolClient>).catch((error: Error) => {
        throw typed(error);
      });
    }) as typeof pool.connect;
  }
  return pool;
}

export function createDatabase(pool: pg.Pool): Database {
  return drizzle(pool, { schema });
}
