// What the HTTP benchmarks share: signing in as the bench user, and reading CPU time from
// /proc (Linux only). Not a benchmark itself.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The bench user's credentials from the environment; exits with a hint when the password is missing. */
export function benchCredentials() {
  const username = process.env.KEEL_BENCH_USER ?? 'bench';
  const password = process.env.KEEL_BENCH_PASSWORD;
  if (!password) {
    process.stderr.write(
      'set KEEL_BENCH_PASSWORD (and KEEL_BENCH_USER) to a user made with `npm run keel -- create-user`\n',
    );
    process.exit(2);
  }
  return { username, password };
}

/** Signs in at `base` and returns the Cookie header of the session. */
export async function signIn(base, { username, password }) {
  const response = await fetch(`${base}/api/auth/sign-in/username`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: base },
    body: JSON.stringify({ username, password }),
  });
  if (!response.ok) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** User + system CPU of a process, in ms. */
export function processCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Busy CPU of the whole machine (every core, every process), in ms. */
export function machineCpuMs() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) * TICK_MS;
}
