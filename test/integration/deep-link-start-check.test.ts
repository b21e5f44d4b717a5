import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/db/embedded';

/** Runs `keel start` to its end: its exit code and what it printed. */
function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'start'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const home = mkdtempSync(join(tmpdir(), 'keel-deep-links-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('log and trace URL templates, checked at start', () => {
  it('a bad template stops `keel start` with a message naming the variable, before any database', async () => {
    const result = await start({
      KEEL_HOME: home,
      KEEL_LOG_URL_TEMPLATE_RECEIPT: 'https://logs.example/search?receipt=',
      KEEL_TRACE_URL_TEMPLATE_EXECUTION: 'ftp://traces.example/{id}',
      PORT: String(await freePort()),
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Keel cannot start: invalid settings');
    expect(result.stderr).toContain('KEEL_LOG_URL_TEMPLATE_RECEIPT has no {id} placeholder for the id');
    expect(result.stderr).toContain('KEEL_TRACE_URL_TEMPLATE_EXECUTION must be an http or https URL, not ftp:');
    expect(result.stdout).not.toMatch(/PostgreSQL/);
  });
});
