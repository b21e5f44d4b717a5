import 'server-only';
import type { DbOrTx } from '../db/client';
import { isRetryableTransactionFailure } from '../db/sqlstate';
import type { UnitOfWork } from '../ports/unit-of-work';

/** Runs of one unit of work in all, the first included. */
export const UNIT_OF_WORK_RUNS = 3;

/** A transaction handle is itself inside a transaction: a failure there is its caller's to retry. */
const isInsideTransaction = (db: DbOrTx): boolean => 'rollback' in db;

/**
 * Each `transaction` is one READ COMMITTED transaction (a savepoint when `db` is already
 * one) with the ports `bind` makes over it. Row locks serialize the decisions; the
 * default isolation lets a waiter see the winner's committed row once it gets the lock.
 * A transaction PostgreSQL chose as a deadlock's victim runs again from the start (up to
 * UNIT_OF_WORK_RUNS in all), re-reading everything it decides on: a runtime writer and a
 * takeover can lock the instance and the execution in opposite orders.
 */
export function postgresUnitOfWork<Ports>(db: DbOrTx, bind: (tx: DbOrTx) => Ports): UnitOfWork<Ports> {
  return {
    async transaction(work) {
      for (let run = 1; ; run += 1) {
        try {
          return await db.transaction((tx) => work(bind(tx)));
        } catch (error) {
          if (run >= UNIT_OF_WORK_RUNS || isInsideTransaction(db) || !isRetryableTransactionFailure(error)) throw error;
        }
      }
    },
  };
}
