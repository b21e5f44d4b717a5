import 'server-only';
import type { DbOrTx } from '../db/client';
import type { UnitOfWork } from '../ports/unit-of-work';

/**
 * Each `transaction` is one READ COMMITTED transaction (a savepoint when `db` is already
 * one) with the ports `bind` makes over it. Row locks serialize the decisions; the
 * default isolation lets a waiter see the winner's committed row once it gets the lock.
 */
export function postgresUnitOfWork<Ports>(db: DbOrTx, bind: (tx: DbOrTx) => Ports): UnitOfWork<Ports> {
  return { transaction: (work) => db.transaction((tx) => work(bind(tx))) };
}
