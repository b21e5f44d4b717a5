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
