import type pg from 'pg';
import type { Actor } from '../../lib/domain/actor';

/**
 * `keel.user` rows for test actors, enabled and with their roles: the bulk replay worker
 * re-reads a job's starter there before every batch, and cancels the job of one it cannot find.
 */
export async function insertKeelUsers(pool: pg.Pool, actors: readonly Actor[]): Promise<void> {
  await pool.query(
    `insert into keel."user" (id, name, email, username, display_username, role, banned)
     select id, name, login || '@users.keel.invalid', login, login, role, false
     from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as a(id, name, login, role)
     on conflict (id) do nothing`,
    [actors.map((a) => a.id), actors.map((a) => a.name), actors.map((a) => a.login), actors.map((a) => a.role)],
  );
}

/**
 * The support, admin and viewer the bulk job tests act as, with their `keel.user` rows inserted:
 * the bulk replay worker re-reads a job's starter there before every batch.
 */
export async function bulkJobActors(pool: pg.Pool): Promise<{ support: Actor; admin: Actor; viewer: Actor }> {
  const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };
  const admin: Actor = { id: 'u-admin', login: 'admin', name: 'Alex Admin', role: 'admin' };
  const viewer: Actor = { id: 'u-viewer', login: 'viewer', name: 'Vera Viewer', role: 'viewer' };
  await insertKeelUsers(pool, [support, admin, viewer]);
  return { support, admin, viewer };
}
