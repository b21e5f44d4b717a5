// Measures Keel's start on the embedded default: time to the first page served, time to
// stop, and whether any postgres process is left behind. Prints figures; asserts nothing.
//   node scripts/measure-start.mjs [--rebuild]
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';

const home = resolve('.keel/measure');
const port = 3300;
const env = {
  ...process.env,
  KEEL_HOME: home,
  PORT: String(port),
  KEEL_EMBEDDED_PG_PORT: '54359',
  KEEL_DEMO_RUNTIME: '0',
};
delete env.DATABASE_URL;

const postgresLeft = () => {
  try {
    // No shell in between: its own command line would contain the pattern.
    return execFileSync('pgrep', ['-f', '--', `-D ${home}/pg`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
};

async function firstPage(child) {
  for (;;) {
    if (child.exitCode !== null) throw new Error('keel exited before serving a page');
    try {
      const response = await fetch(`http://127.0.0.1:${port}/sign-in`);
      if (response.status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function run(label, args, signal) {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'start', ...args],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let built = false;
  child.stdout.on('data', (chunk) => {
    if (String(chunk).includes('building the console')) built = true;
  });
  await firstPage(child);
  const ready = (performance.now() - started) / 1000;
  const stopping = performance.now();
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
  const stopped = (performance.now() - stopping) / 1000;
  await new Promise((r) => setTimeout(r, 500));
  console.log(
    `${label}: first page after ${ready.toFixed(1)} s${built ? ' (including next build)' : ''}; ${signal} -> exit ` +
      `in ${stopped.toFixed(1)} s; postgres processes left: ${postgresLeft()}`,
  );
}

// Without its build id, the build in .next is not taken for one of these sources: the cold start builds.
if (process.argv.includes('--rebuild')) rmSync('.next/BUILD_ID', { force: true });
rmSync(home, { recursive: true, force: true });
await run('cold start, fresh database (migrate + seed)', ['--fresh'], 'SIGTERM');
await run('warm start, existing database', [], 'SIGINT');
rmSync(home, { recursive: true, force: true });
