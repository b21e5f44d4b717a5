import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// scripts/bundle-budget.mjs against a made-up build: two pages sharing a framework chunk.
const script = fileURLToPath(new URL('../../scripts/bundle-budget.mjs', import.meta.url));
const build = mkdtempSync(join(tmpdir(), 'keel-bundle-'));
afterAll(() => rmSync(build, { recursive: true, force: true }));

// Random bytes do not compress: a chunk of n bytes weighs a little over n gzipped.
function chunk(name: string, bytes: number): string {
  mkdirSync(join(build, 'static', 'chunks'), { recursive: true });
  writeFileSync(join(build, 'static', 'chunks', name), randomBytes(bytes).toString('latin1'), 'latin1');
  return `static/chunks/${name}`;
}

function page(entry: string, chunks: string[]): void {
  const dir = join(build, 'server', 'app', ...entry.split('/').filter(Boolean).slice(0, -1));
  mkdirSync(dir, { recursive: true });
  const manifest = { entryJSFiles: { '[project]/app/layout': chunks.slice(0, 1), [`[project]/app${entry}`]: chunks } };
  writeFileSync(
    join(dir, 'page_client-reference-manifest.js'),
    'globalThis.__RSC_MANIFEST = globalThis.__RSC_MANIFEST || {};\n' +
      `globalThis.__RSC_MANIFEST[${JSON.stringify(entry)}] = ${JSON.stringify(manifest)};\n`,
  );
}

const framework = chunk('framework.js', 10_000);
const layout = chunk('layout.js', 2_000);
page('/(console)/light/page', [layout]);
page('/(console)/heavy/page', [layout, chunk('heavy.js', 20_000)]);
writeFileSync(join(build, 'BUILD_ID'), 'test');
writeFileSync(
  join(build, 'build-manifest.json'),
  JSON.stringify({ rootMainFiles: [framework], polyfillFiles: [chunk('polyfills.js', 50_000)] }),
);

const run = (budgetKb: number) =>
  spawnSync(process.execPath, [script, '--dir', build, '--budget', String(budgetKb)], { encoding: 'utf8' });

describe('bundle budget', () => {
  it('weighs each page as the framework plus its layouts and page chunks (each once), gzipped, no polyfills', () => {
    const result = run(1_000);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    const weight = (route: string) =>
      Number(new RegExp(`^${route}\\s+\\S+\\s+\\S+\\s+(\\S+)`, 'm').exec(result.stdout)?.[1]);
    expect(weight('/light')).toBeGreaterThanOrEqual(12);
    expect(weight('/light')).toBeLessThan(12.5);
    expect(weight('/heavy')).toBeGreaterThanOrEqual(32);
    expect(weight('/heavy')).toBeLessThan(33);
  });

  it('fails when one page passes the budget, naming it', () => {
    const result = run(20);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^\/heavy .* OVER 20 kB$/m);
    expect(result.stdout).not.toMatch(/^\/light .*OVER/m);
  });

  it('refuses to pass without a build', () => {
    const result = spawnSync(process.execPath, [script, '--dir', join(build, 'missing')], { encoding: 'utf8' });
    expect(result.status).toBe(2);
  });
});
