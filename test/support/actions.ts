import type { z } from 'zod';
import { postgresAuditLog } from '../../lib/adapters/audit-log';
import type { DbOrTx } from '../../lib/db/client';
import type { Actor } from '../../lib/domain/actor';
import type { ActionName } from '../../lib/domain/roles';
import type { ActionResult, ServiceResult } from '../../lib/domain/service-result';
import { action, type ActionDeps } from '../../lib/server/action';

/**
 * What action() (lib/server/action.ts) needs, bound to a test's database and a signed-in
 * actor: the wrapper's own refusals (FORBIDDEN, INVALID_INPUT) land in that database's audit log.
 */
export const actionDepsFor = (db: DbOrTx, actor: Actor | null): ActionDeps => ({
  currentActor: async () => actor,
  auditLog: () => postgresAuditLog(db),
  fenceWrite: async () => {},
});

/**
 * A server action as app/actions wires it (the real action() around a service), with its
 * session and audit log on the test's database: the path a browser's input takes.
 */
export function actionAs<S extends z.ZodType, T>(
  db: DbOrTx,
  actor: Actor | null,
  schema: S,
  name: ActionName,
  handler: (actor: Actor, input: z.output<S>) => Promise<ServiceResult<T>>,
): (input: z.input<S>) => Promise<ActionResult<T>> {
  return action(schema, name, handler, { deps: actionDepsFor(db, actor) });
}
