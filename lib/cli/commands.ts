import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { createAuth } from '../auth/auth';
import { isRole, ROLES } from '../domain/roles';
import { createUserAccount } from '../auth/users';
import { createDatabase, createPool } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { createIndexStatement, missingRuntimeIndexes, RUNTIME_INDEXES } from '../db/runtime-indexes';
import { seedDemo } from '../demo/seed';
import { checkRuntimeDigests, formatDigestCheck } from './check-runtime-digests';
import { resolveEnvironment, SettingsRefused } from './environment';
import { startConsole } from './start';

const HELP = `Usage: npm run keel -- <command> [options]

Commands:
  start [--fresh] [--no-build]
                        start the console (embedded PostgreSQL when DATABASE_URL is unset;
                        --fresh discards the embedded database first and seeds anew;
                        --no-build serves the build in .next as it is, never building)
  dev                   the same with Next.js in development mode
  migrate               apply migrations and check the oxide_batch schema version
  runtime-indexes [--apply]
                        print the indexes Keel's filters want on the runtime's tables;
                        --apply creates the missing ones concurrently (an explicit choice:
                        Keel never alters an attached oxide_batch schema by itself)
  create-user           create a user: --username NAME --role ROLE [--name "Full Name"] [--email E]
                        [--break-glass] (named breakglass.NAME; keeps password sign-in with KEEL_LOCAL_SIGN_IN=0)
                        the password is read from KEEL_NEW_USER_PASSWORD or asked for on the terminal
                        roles: ${ROLES.join(', ')}
  demo-runtime          run the demo runtime's workers against the database until Ctrl-C
                        (the console already runs one unless KEEL_DEMO_RUNTIME=0)
  load-scale [--executions N --retry-keys N --attempts N --dead-letters N] [--append]
                        load generated executions, retry keys and settlements into DATABASE_URL
                        (set-based; refuses a database that already holds them unless --append)
  check-runtime-digests --migrations DIR [--database-url URL]
                        build a scratch database from the runtime's own migration files in DIR
                        (on the server of --database-url or DATABASE_URL), write executions
                        0/300/500/700 us past a millisecond, and compare Keel's evidence digests
                        with the runtime's SQL reading; exit 1 on any difference
`;

const log = (line: string) => process.stdout.write(`[keel] ${line}\n`);

async function withDatabase<T>(work: (env: Awaited<ReturnType<typeof resolveEnvironment>>) => Promise<T>): Promise<T> {
  const resolved = await resolveEnvironment(log);
  // Interrupted, a command stops the embedded cluster before it ends.
  const stopThenExit = (code: number) => () => void resolved.stop().finally(() => process.exit(code));
  const onInterrupt = stopThenExit(130);
  const onTerminate = stopThenExit(143);
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onTerminate);
  try {
    return await work(resolved);
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    process.removeListener('SIGTERM', onTerminate);
    await resolved.stop();
  }
}

/** Prints Keel's indexes for the runtime's tables; with --apply creates the missing ones concurrently. */
async function runtimeIndexesCommand(args: string[]): Promise<number> {
  return withDatabase(async ({ settings }) => {
    const pool = createPool(settings.databaseUrl!, 1);
    try {
      const missing = new Set(await missingRuntimeIndexes(pool));
      for (const index of RUNTIME_INDEXES) {
        process.stdout.write(
          `-- ${index.purpose}${missing.has(index.name) ? '' : ' (present)'}\n${createIndexStatement(index, true)};\n`,
        );
      }
      if (!args.includes('--apply')) return 0;
      for (const index of RUNTIME_INDEXES.filter((i) => missing.has(i.name))) {
        log(`creating ${index.name} concurrently`);
        // CONCURRENTLY cannot run in a transaction; a failed build
        // leaves an invalid index, which IF NOT EXISTS would keep.
        await pool.query(createIndexStatement(index, true)).catch(async (error: unknown) => {
          await pool.query(`DROP INDEX CONCURRENTLY IF EXISTS oxide_batch.${index.name}`);
          throw error;
        });
      }
      log(missing.size === 0 ? 'all indexes present' : `created ${missing.size} index(es)`);
      return 0;
    } finally {
      await pool.end();
    }
  });
}

async function migrateCommand(): Promise<number> {
  return withDatabase(async ({ settings }) => {
    const pool = createPool(settings.databaseUrl!, 2);
    try {
      const result = await migrateDatabase(pool);
      if (!result.ok) {
        process.stderr.write(`[keel] refused (${result.error.code}): ${result.error.message}\n`);
        return 1;
      }
      log(`migrated; oxide_batch ${result.value.runtimeSchema} at version ${result.value.runtimeVersion}`);
      return 0;
    } finally {
      await pool.end();
    }
  });
}

async function readPassword(): Promise<string> {
  const fromEnv = process.env.KEEL_NEW_USER_PASSWORD;
  if (fromEnv) return fromEnv;
  if (!process.stdin.isTTY) throw new Error('set KEEL_NEW_USER_PASSWORD or run on a terminal');
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  // Hide what is typed: write the prompt, then mute echo.
  const output = rl as unknown as { _writeToOutput: (s: string) => void };
  process.stdout.write('Password: ');
  output._writeToOutput = () => {};
  const password = await rl.question('');
  rl.close();
  process.stdout.write('\n');
  return password;
}

async function createUserCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      username: { type: 'string' },
      role: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      'break-glass': { type: 'boolean' },
    },
  });
  if (!values.username || !values.role) {
    process.stderr.write(`--username and --role are required\n\n${HELP}`);
    return 2;
  }
  if (!isRole(values.role)) {
    process.stderr.write(`unknown role ${values.role}; one of: ${ROLES.join(', ')}\n`);
    return 2;
  }
  const role = values.role;
  const breakGlass = values['break-glass'] === true;
  // A break-glass account keeps password sign-in when KEEL_LOCAL_SIGN_IN=0; its name says so.
  const username =
    breakGlass && !values.username.startsWith('breakglass.') ? `breakglass.${values.username}` : values.username;
  const password = await readPassword();
  return withDatabase(async ({ settings }) => {
    const pool = createPool(settings.databaseUrl!, 2);
    try {
      const migrated = await migrateDatabase(pool);
      if (!migrated.ok) {
        process.stderr.write(`[keel] refused (${migrated.error.code}): ${migrated.error.message}\n`);
        return 1;
      }
      const auth = createAuth(createDatabase(pool), {
        secret: settings.authSecret!,
        port: settings.port,
        signInPerMinute: settings.signInPerMinute,
      });
      const created = await createUserAccount(auth, {
        username,
        name: values.name ?? username,
        role,
        password,
        email: values.email,
        breakGlass,
      });
      if (!created.ok) {
        process.stderr.write(`[keel] ${created.error.code}: ${created.error.message}\n`);
        return 1;
      }
      log(
        `created ${username} with role ` +
          `${role}${breakGlass ? ' (break-glass: signs in with a password even when KEEL_LOCAL_SIGN_IN=0)' : ''}`,
      );
      return 0;
    } finally {
      await pool.end();
    }
  });
}

/**
 * Resolves at the first Ctrl-C or SIGTERM; a ref'd timer keeps the process alive until
 * then. withDatabase's handlers stop the cluster and exit at once, which would cut the
 * workers off mid-step, so the first signal is taken here (withDatabase stops the cluster
 * afterwards) and the handlers are handed back: a second signal forces.
 */
function untilInterrupted(): Promise<void> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const keepAlive = setInterval(() => {}, 60_000);
  const others = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
  for (const signal of signals) process.removeAllListeners(signal);
  return new Promise((resolve) => {
    const stop = () => {
      clearInterval(keepAlive);
      for (const signal of signals) {
        process.removeListener(signal, stop);
        for (const listener of others.get(signal) ?? []) process.on(signal, listener);
      }
      resolve();
    };
    for (const signal of signals) process.once(signal, stop);
  });
}

async function demoRuntimeCommand(): Promise<number> {
  return withDatabase(async ({ settings }) => {
    const pool = createPool(settings.databaseUrl!, 6);
    try {
      const migrated = await migrateDatabase(pool);
      if (!migrated.ok) {
        process.stderr.write(`[keel] refused (${migrated.error.code}): ${migrated.error.message}\n`);
        return 1;
      }
      const db = createDatabase(pool);
      if (settings.demo) await seedDemo(db, settings, log);
      // Loaded only here, so the other commands do not pay for the store's module graph.
      const { startDemoRuntime } = await import('../demo/runtime');
      const runtime = startDemoRuntime({
        db,
        settings,
        log: (level, message, fields) =>
          log(`${level === 'info' ? '' : `${level}: `}${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`),
      });
      log('demo runtime running; Ctrl-C stops it');
      await untilInterrupted();
      await runtime.stop();
      return 0;
    } finally {
      await pool.end();
    }
  });
}

async function checkRuntimeDigestsCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { migrations: { type: 'string' }, 'database-url': { type: 'string' } },
  });
  const url = values['database-url'] ?? process.env.DATABASE_URL;
  if (!values.migrations || !url) {
    process.stderr.write('check-runtime-digests needs --migrations DIR and --database-url URL (or DATABASE_URL)\n');
    return 2;
  }
  const report = await checkRuntimeDigests(url, values.migrations);
  process.stdout.write(formatDigestCheck(report));
  return report.agreeing === report.rows.length ? 0 : 1;
}

export async function runCommand(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'start':
      case 'dev':
        return await startConsole(command, { fresh: rest.includes('--fresh'), build: !rest.includes('--no-build') });
      case 'migrate':
        return await migrateCommand();
      case 'create-user':
        return await createUserCommand(rest);
      case 'runtime-indexes':
        return await runtimeIndexesCommand(rest);
      case 'demo-runtime':
        return await demoRuntimeCommand();
      case 'load-scale':
        return await (await import('./load-scale')).loadScaleCommand(rest, log);
      case 'check-runtime-digests':
        return await checkRuntimeDigestsCommand(rest);
      case undefined:
      case 'help':
      case '--help':
        process.stdout.write(HELP);
        return 0;
      default:
        process.stderr.write(`unknown command: ${command}\n\n${HELP}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof SettingsRefused) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
