import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The hand-written migrations, the drizzle schema files and drizzle's last snapshot agree:
// drizzle-kit, run against a copy of drizzle/, has nothing to generate. Otherwise the next
// `npm run db:generate` would emit a migration repeating (or missing) a change.
const root = fileURLToPath(new URL('../..', import.meta.url));
mkdirSync(join(root, '.keel'), { recursive: true });
const scratch = mkdtempSync(join(root, '.keel', 'drizzle-probe-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('migrations', () => {
  it('are in step with the schema files and the last snapshot', () => {
    // drizzle.config.ts's settings, writing into the copy.
    const config = join(scratch, 'drizzle.probe.config.mjs');
    const out = relative(root, join(scratch, 'migrations'));
    cpSync(join(root, 'drizzle'), join(scratch, 'migrations'), { recursive: true });
    writeFileSync(
      config,
      `export default ${JSON.stringify({
        dialect: 'postgresql',
        schema: ['settle', 'keel', 'auth', 'webhooks'].map((name) => `./lib/db/schema/${name}.ts`),
        out,
        schemaFilter: ['settle', 'keel'],
        migrations: { schema: 'keel', table: '__drizzle_migrations' },
      })};\n`,
    );
    const output = execFileSync(
      process.execPath,
      [join(root, 'node_modules', 'drizzle-kit', 'bin.cjs'), 'generate', '--config', config, '--name', 'probe'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(output).toContain('No schema changes');
    expect(readdirSync(join(scratch, 'migrations')).sort()).toEqual(readdirSync(join(root, 'drizzle')).sort());
  }, 60_000);
});
