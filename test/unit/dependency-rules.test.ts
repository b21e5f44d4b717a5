import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// The layering rules of .dependency-cruiser.cjs (the same ones `npm run lint:deps` applies), run through the API.
const root = fileURLToPath(new URL('../..', import.meta.url));
const probes: string[] = [];

afterEach(() => {
  for (const dir of probes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function violationsOf(paths: string[]): Promise<IViolation[]> {
  const options: ICruiseOptions = {
    ...(await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'))),
    baseDir: root,
  };
  const tsConfig = extractTSConfig(join(root, 'tsconfig.json'));
  const result = await cruise(paths, options, {}, { tsConfig });
  return (result.output as ICruiseResult).summary.violations;
}

/**
 * Writes one file into a fresh directory under `folder` (inside
 * the repository, where the rules apply); removed after the test.
 */
function probe(folder: string, name: string, source: string): string {
  const dir = mkdtempSync(join(root, folder, 'dependency-probe-'));
  probes.push(dir);
  writeFileSync(join(dir, name), source);
  return relative(root, join(dir, name));
}

const brief = (v: IViolation) => `${v.rule.name}: ${v.from} -> ${v.to}`;

describe('dependency rules', () => {
  it('the tree breaks none of them', async () => {
    const violations = await violationsOf(['.']);
    expect(violations.map(brief)).toEqual([]);
  }, 60_000);

  it('refuses the domain importing the database client through the @/ alias', async () => {
    const file = probe(
      'lib/domain',
      'broken.ts',
      "import { createPool } from '@/lib/db/client';\nexport const pool = createPool;\n",
    );
    const violations = await violationsOf([file]);
    expect(violations.map(brief)).toContain(`domain-is-pure: ${file} -> lib/db/client.ts`);
  }, 60_000);

  it('refuses a component importing an adapter, and a service importing one even for a type', async () => {
    const component = probe(
      'components',
      'broken.tsx',
      "import { postgresAuditLog } from '@/lib/adapters/audit-log';\nexport const log = postgresAuditLog;\n",
    );
    const service = probe(
      'lib/services',
      'broken.ts',
      "import type { SignInLockout } from '../../adapters/sign-in-lockout';\nexport type L = SignInLockout;\n",
    );
    const found = (await violationsOf([component, service])).map(brief);
    expect(found).toContain(`components-never-reach-the-server: ${component} -> lib/adapters/audit-log.ts`);
    expect(found).toContain(`only-the-composition-root-builds-adapters: ${component} -> lib/adapters/audit-log.ts`);
    expect(found).toContain(`services-are-functions-of-their-ports: ${service} -> lib/adapters/sign-in-lockout.ts`);
  }, 60_000);

  it('refuses an action or an adapter reading through the replica, directly or through another module', async () => {
    const act = probe(
      'app/actions',
      'broken.ts',
      "import { listDb } from '@/lib/server/read-source';\nexport const read = listDb;\n",
    );
    const adapter = probe(
      'lib/adapters',
      'broken.ts',
      "import { listDb } from '../../server/read-source';\nexport const read = listDb;\n",
    );
    // Through a module that reads lists: reachable is enough.
    const indirect = probe(
      'app/actions',
      'broken.ts',
      "import { jobNames } from '@/lib/server/console-reads';\nexport const names = jobNames;\n",
    );
    const found = (await violationsOf([act, adapter, indirect])).map(brief);
    expect(found).toContain(`decisions-never-read-the-replica: ${act} -> lib/server/read-source.ts`);
    expect(found).toContain(`decisions-never-read-the-replica: ${adapter} -> lib/server/read-source.ts`);
    expect(found).toContain(`decisions-never-read-the-replica: ${indirect} -> lib/server/read-source.ts`);
  }, 60_000);
});
