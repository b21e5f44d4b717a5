import { eq } from 'drizzle-orm';
import { createAuth } from '../auth/auth';
import type { Role } from '../domain/roles';
import { createUserAccount } from '../auth/users';
import type { Settings } from '../config/settings';
import type { Database } from '../db/client';
import { keelMeta } from '../db/schema/keel';
import { SeededRandom } from './random';
import { seedBatch } from './seed-batch';
import { seededOwnerToken } from './seeded-owner';
import { seedOrchestrations } from './seed-orchestrations';
import { seedSettlements } from './seed-settlements';

export const DEMO_SEED = 20261130;
const SEED_MARKER = 'demo_seed';

/** One user per role (docs/design.md#demo-mode); approver2 lets two approvers meet on one proposal. */
export const DEMO_USERS: { username: string; name: string; role: Role }[] = [
  { username: 'viewer', name: 'Vera Viewer', role: 'viewer' },
  { username: 'operator', name: 'Otto Operator', role: 'operator' },
  { username: 'approver', name: 'Ada Approver', role: 'approver' },
  { username: 'approver2', name: 'Abel Approver', role: 'approver' },
  { username: 'support', name: 'Sam Support', role: 'support' },
  { username: 'admin', name: 'Alex Admin', role: 'admin' },
];

/**
 * Seeds demo data once per database: the runtime's tables, the settlement store,
 * orchestration checkpoints and the demo users. Returns false when already seeded.
 */
export async function seedDemo(
  db: Database,
  settings: Settings,
  log: (line: string) => void = () => {},
): Promise<boolean> {
  const done = await db.select({ key: keelMeta.key }).from(keelMeta).where(eq(keelMeta.key, SEED_MARKER));
  if (done.length > 0) return false;
  if (!settings.checkpointKey || !settings.authSecret) throw new Error('demo seeding needs the checkpoint key');
  const checkpointKey = settings.checkpointKey;
  const started = performance.now();
  const nowMs = Date.now();
  const random = new SeededRandom(DEMO_SEED);
  await db.transaction(async (tx) => {
    const batch = await seedBatch(tx, random, nowMs, { liveOwnerToken: (id) => seededOwnerToken(checkpointKey, id) });
    const settlements = await seedSettlements(tx, random, nowMs);
    const orchestrations = await seedOrchestrations(tx, random, nowMs, checkpointKey);
    log(
      `seeded ${batch.executions} executions (${batch.stale} stale, ${batch.corrupt} corrupt envelopes), ` +
        `${settlements.attempts} settlement attempts, ${settlements.deadLetters} dead letters, ` +
        `${orchestrations} orchestrations`,
    );
    await tx
      .insert(keelMeta)
      .values({ key: SEED_MARKER, value: { seed: DEMO_SEED, at: new Date(nowMs).toISOString() } });
  });
  const auth = createAuth(db, {
    secret: settings.authSecret,
    port: settings.port,
    signInPerMinute: settings.signInPerMinute,
  });
  for (const user of DEMO_USERS) {
    const created = await createUserAccount(auth, { ...user, password: settings.demoPassword });
    if (!created.ok && created.error.code !== 'USER_EXISTS') throw new Error(created.error.message);
  }
  log(`demo seed took ${((performance.now() - started) / 1000).toFixed(1)}s`);
  return true;
}
