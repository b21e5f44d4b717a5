import { beforeAll, describe, expect, it } from 'vitest';
import { createAuth, type KeelAuth } from '../../lib/auth/auth';
import { createUserAccount } from '../../lib/auth/users';
import { createStreamSessionWatch, type StreamEnd } from '../../lib/server/live-stream-sessions';
import { freshDatabase, type TestDatabase } from '../support/database';
import { sessionTokenOf, signInCookie } from '../support/sign-in';

const PORT = 3997;

/** Signs `username` in through better-auth's own handler; returns its session token. */
const sessionToken = async (auth: KeelAuth, username: string) =>
  sessionTokenOf(
    await signInCookie(auth, { port: PORT, clientAddress: '10.3.0.1', username, password: 'correct-horse' }),
  );

describe('the sessions behind open event streams are checked again', () => {
  let database: TestDatabase;
  let auth: KeelAuth;

  beforeAll(async () => {
    database = await freshDatabase();
    auth = createAuth(database.db, { secret: 's'.repeat(64), port: PORT, signInPerMinute: 100 });
    for (const [username, role] of [
      ['out', 'viewer'],
      ['off', 'support'],
      ['down', 'admin'],
      ['stay', 'viewer'],
      ['lapse', 'operator'],
    ] as const) {
      expect((await createUserAccount(auth, { username, name: username, role, password: 'correct-horse' })).ok).toBe(
        true,
      );
    }
  });

  it('closes the stream of a session signed out, user disabled, role changed or expiry, and only those', async () => {
    const watch = createStreamSessionWatch(database.pool, { intervalMs: 60_000 });
    const ended = new Map<string, StreamEnd>();
    const confirmed = new Map<string, number>();
    const open = async (username: string, role: 'viewer' | 'support' | 'admin' | 'operator') => {
      const token = await sessionToken(auth, username);
      watch.watch({
        token,
        role,
        close: (why) => ended.set(username, why),
        confirmed: () => confirmed.set(username, (confirmed.get(username) ?? 0) + 1),
      });
      return token;
    };
    const out = await open('out', 'viewer');
    await open('off', 'support');
    await open('down', 'admin');
    await open('stay', 'viewer');
    const lapse = await open('lapse', 'operator');
    await watch.check();
    expect(ended.size).toBe(0);
    expect([...confirmed.values()]).toEqual([1, 1, 1, 1, 1]);

    await database.pool.query(`delete from keel.session where token = $1`, [out]);
    await database.pool.query(`update keel."user" set banned = true where username = 'off'`);
    await database.pool.query(`update keel."user" set role = 'viewer' where username = 'down'`);
    await database.pool.query(`update keel.session set expires_at = now() - interval '1 second' where token = $1`, [
      lapse,
    ]);
    await watch.check();
    expect(Object.fromEntries(ended)).toEqual({
      out: 'SIGNED_OUT',
      off: 'DISABLED',
      down: 'ROLE_CHANGED',
      lapse: 'SIGNED_OUT',
    });
    expect(watch.size()).toBe(1);
    // Only the stream whose session is as it was is confirmed again: its live pass stays fresh.
    expect(Object.fromEntries(confirmed)).toEqual({ out: 1, off: 1, down: 1, stay: 2, lapse: 1 });
    // A closed stream is not closed twice.
    await watch.check();
    expect(ended.size).toBe(4);
  });

  it('checks on its own, every stream of the process in one statement', async () => {
    const statements: { sql: string; tokens: number }[] = [];
    const counted = {
      query: (sql: string, values: unknown[][]) => (
        statements.push({ sql, tokens: values[0]!.length }), database.pool.query(sql, values)
      ),
    };
    const timed = createStreamSessionWatch(counted as never, { intervalMs: 50 });
    const tokens = await Promise.all(['stay', 'stay', 'stay'].map(() => sessionToken(auth, 'stay')));
    const closed = new Promise<StreamEnd>((resolve) => {
      for (const token of tokens) timed.watch({ token, role: 'viewer', close: resolve });
    });
    await database.pool.query(`delete from keel.session where token = any($1::text[])`, [tokens]);
    expect(await closed).toBe('SIGNED_OUT');
    await expect.poll(() => timed.size()).toBe(0);
    // The first check read all three sessions in one statement.
    expect(statements[0]).toEqual({ sql: expect.stringContaining('any($1::text[])'), tokens: 3 });
  });
});
