import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// The layering rules of .dependency-cruiser.cjs (the same ones `npm run lint:deps` applies), run through the API:
// each rule is broken once on purpose, by a file written into the folder the rule guards, and must be reported.
const root = fileURLToPath(new URL('../..', import.meta.url));
const configFile = join(root, '.dependency-cruiser.cjs');
const probes: string[] = [];

afterEach(() => {
  for (const file of probes.splice(0)) rmSync(join(root, file), { force: true });
});

async function cruiseOptions(): Promise<ICruiseOptions> {
  return { ...(await extractDepcruiseOptions(configFile)), baseDir: root };
}

async function violationsOf(paths: string[], options?: ICruiseOptions): Promise<IViolation[]> {
  const tsConfig = extractTSConfig(join(root, 'tsconfig.json'));
  const result = await cruise(paths, options ?? (await cruiseOptions()), {}, { tsConfig });
  return (result.output as ICruiseResult).summary.violations;
}

/**
 * Writes one file straight into `folder` (inside the repository, where the rules apply), named so no test
 * runner, page or route picks it up; removed after the test. Returns its path from the repository root.
 */
function probe(folder: string, source: string, suffix = '.ts'): string {
  const file = `${folder}/dependency-probe-${randomBytes(4).toString('hex')}${suffix}`;
  probes.push(file);
  writeFileSync(join(root, file), source);
  return file;
}

const brief = (v: IViolation) => `${v.rule.name}: ${v.from} -> ${v.to}`;

/** Cruises the probes and expects `rule` reported for each forbidden import `[from, to]` listed. */
async function expectReported(rule: string, imports: [from: string, to: string][]): Promise<void> {
  const found = (await violationsOf([...new Set(imports.map(([from]) => from))])).map(brief);
  for (const [from, to] of imports) expect(found).toContain(`${rule}: ${from} -> ${to}`);
}

// One case per rule of the configuration; the last test checks that none is missing.
const cases: Record<string, () => Promise<void>> = {
  'no-circular': async () => {
    const name = `dependency-probe-${randomBytes(4).toString('hex')}`;
    const a = `lib/url-state/${name}-a.ts`;
    const b = `lib/url-state/${name}-b.ts`;
    probes.push(a, b);
    writeFileSync(join(root, a), `import { b } from './${name}-b';\nexport const a = () => b;\n`);
    writeFileSync(join(root, b), `import { a } from './${name}-a';\nexport const b = () => a;\n`);
    await expectReported('no-circular', [[a, b]]);
  },
  'not-to-unresolvable': async () => {
    const file = probe('lib/url-state', "export { nothing } from './no-such-module';\n");
    await expectReported('not-to-unresolvable', [[file, './no-such-module']]);
  },
  'domain-is-pure': async () => {
    const file = probe(
      'lib/domain',
      "import { createPool } from '@/lib/db/client';\nexport const pool = createPool;\n",
    );
    await expectReported('domain-is-pure', [[file, 'lib/db/client.ts']]);
  },
  'observability-is-the-ground-floor': async () => {
    const file = probe(
      'lib/observability',
      "import type { Database } from '../db/client';\nexport type D = Database;\n",
    );
    await expectReported('observability-is-the-ground-floor', [[file, 'lib/db/client.ts']]);
  },
  'ports-are-interfaces': async () => {
    const port = probe('lib/ports', "import type { DbOrTx } from '../db/client';\nexport type D = DbOrTx;\n");
    const simulated = probe(
      'lib/simulator/ports',
      "import type { AuditLog } from '../../adapters/audit-log';\nexport type A = AuditLog;\n",
    );
    await expectReported('ports-are-interfaces', [
      [port, 'lib/db/client.ts'],
      [simulated, 'lib/adapters/audit-log.ts'],
    ]);
  },
  'foundations-stand-alone': async () => {
    const db = probe('lib/db', "import type { AuditReader } from '../queries/audit';\nexport type R = AuditReader;\n");
    const config = probe(
      'lib/config',
      "import { runtime } from '../server/composition-root';\nexport const r = runtime;\n",
    );
    await expectReported('foundations-stand-alone', [
      [db, 'lib/queries/audit.ts'],
      [config, 'lib/server/composition-root.ts'],
    ]);
  },
  'services-are-functions-of-their-ports': async () => {
    const file = probe(
      'lib/services',
      "import type { SignInLockout } from '../adapters/sign-in-lockout';\nexport type L = SignInLockout;\n",
    );
    await expectReported('services-are-functions-of-their-ports', [[file, 'lib/adapters/sign-in-lockout.ts']]);
  },
  'adapters-never-reach-up': async () => {
    const file = probe(
      'lib/adapters',
      "import type { UserServicePorts } from '../services/users';\nexport type P = UserServicePorts;\n",
    );
    await expectReported('adapters-never-reach-up', [[file, 'lib/services/users.ts']]);
  },
  'queries-never-reach-up': async () => {
    const file = probe(
      'lib/queries',
      "import type { runtime } from '../server/composition-root';\nexport type R = typeof runtime;\n",
    );
    await expectReported('queries-never-reach-up', [[file, 'lib/server/composition-root.ts']]);
  },
  'workers-never-reach-the-wiring': async () => {
    const file = probe('lib/workers', "import { action } from '../server/action';\nexport const a = action;\n");
    await expectReported('workers-never-reach-the-wiring', [[file, 'lib/server/action.ts']]);
  },
  'auth-never-reaches-the-wiring': async () => {
    // The exception this rule used to carry: the lockout's interface taken from its adapter, for a type.
    const file = probe(
      'lib/auth',
      "import type { postgresSignInLockout } from '../adapters/sign-in-lockout';\n" +
        'export type L = typeof postgresSignInLockout;\n',
    );
    await expectReported('auth-never-reaches-the-wiring', [[file, 'lib/adapters/sign-in-lockout.ts']]);
  },
  'http-helpers-stand-alone': async () => {
    const file = probe('lib/http', "import type { Database } from '../db/client';\nexport type D = Database;\n");
    await expectReported('http-helpers-stand-alone', [[file, 'lib/db/client.ts']]);
  },
  'the-simulator-stands-apart': async () => {
    const file = probe(
      'lib/simulator/adapters',
      "import { postgresAuditLog } from '../../adapters/audit-log';\nexport const log = postgresAuditLog;\n",
    );
    await expectReported('the-simulator-stands-apart', [[file, 'lib/adapters/audit-log.ts']]);
  },
  'only-the-demo-uses-the-simulator': async () => {
    const file = probe(
      'lib/queries',
      "import type { SettlementOutcomeStore } from '../simulator/ports/settlement-store';\n" +
        'export type S = SettlementOutcomeStore;\n',
    );
    await expectReported('only-the-demo-uses-the-simulator', [[file, 'lib/simulator/ports/settlement-store.ts']]);
  },
  'only-the-composition-root-starts-the-demo': async () => {
    const file = probe('lib/server', "import { seedDemo } from '../demo/seed';\nexport const seed = seedDemo;\n");
    await expectReported('only-the-composition-root-starts-the-demo', [[file, 'lib/demo/seed.ts']]);
  },
  'only-entry-points-use-the-server-wiring': async () => {
    const cli = probe('lib/cli', "import { runtime } from '../server/composition-root';\nexport const r = runtime;\n");
    const adapter = probe(
      'lib/adapters',
      "import type { action } from '../server/action';\nexport type A = typeof action;\n",
    );
    await expectReported('only-entry-points-use-the-server-wiring', [
      [cli, 'lib/server/composition-root.ts'],
      [adapter, 'lib/server/action.ts'],
    ]);
  },
  'only-the-composition-root-builds-adapters': async () => {
    // What app/actions/users.ts once did (a stale exception now): build the user unit of work itself.
    const file = probe(
      'app/actions',
      "import { postgresUserUnitOfWork } from '@/lib/adapters/user-directory';\n" +
        'export const uow = postgresUserUnitOfWork;\n',
    );
    await expectReported('only-the-composition-root-builds-adapters', [[file, 'lib/adapters/user-directory.ts']]);
  },
  'use-cases-run-through-actions': async () => {
    const file = probe(
      'app/api',
      "import { createUser } from '@/lib/services/users';\nexport const create = createUser;\n",
    );
    await expectReported('use-cases-run-through-actions', [[file, 'lib/services/users.ts']]);
  },
  'decisions-never-read-the-replica': async () => {
    const act = probe(
      'app/actions',
      "import { listDb } from '@/lib/server/read-source';\nexport const read = listDb;\n",
    );
    const adapter = probe(
      'lib/adapters',
      "import { listDb } from '../server/read-source';\nexport const read = listDb;\n",
    );
    // Through a module that reads lists (the read kernel): reachable is enough.
    const indirect = probe(
      'app/actions',
      "import { defineRead } from '@/lib/reads/define-read';\nexport const define = defineRead;\n",
    );
    await expectReported('decisions-never-read-the-replica', [
      [act, 'lib/server/read-source.ts'],
      [adapter, 'lib/server/read-source.ts'],
      [indirect, 'lib/server/read-source.ts'],
    ]);
  },
  'components-never-reach-the-server': async () => {
    const file = probe(
      'components',
      "import type { Database } from '@/lib/db/client';\nexport type D = Database;\n",
      '.tsx',
    );
    await expectReported('components-never-reach-the-server', [[file, 'lib/db/client.ts']]);
  },
  'components-take-read-shapes-from-types-files': async () => {
    // The type import the rule used to let through: lib/queries/audit.ts reaches the database.
    const file = probe(
      'components',
      "import type { AuditReader } from '@/lib/queries/audit';\nexport type R = AuditReader;\n",
      '.tsx',
    );
    await expectReported('components-take-read-shapes-from-types-files', [[file, 'lib/queries/audit.ts']]);
  },
  'client-safe-modules-stay-client-safe': async () => {
    const shapes = probe(
      'lib/queries',
      "import type { DbOrTx } from '../db/client';\nexport type D = DbOrTx;\n",
      '-types.ts',
    );
    const urlState = probe(
      'lib/url-state',
      "import type { AuditReader } from '../queries/audit';\nexport type R = AuditReader;\n",
    );
    await expectReported('client-safe-modules-stay-client-safe', [
      [shapes, 'lib/db/client.ts'],
      [urlState, 'lib/queries/audit.ts'],
    ]);
  },
  'the-product-never-imports-its-tests-and-tools': async () => {
    const file = probe(
      'lib/server',
      "import { freshDatabase } from '../../test/support/database';\nexport const f = freshDatabase;\n",
    );
    await expectReported('the-product-never-imports-its-tests-and-tools', [[file, 'test/support/database.ts']]);
  },
  'e2e-drives-the-product-from-outside': async () => {
    const file = probe(
      'e2e',
      "import { recoveryDeps } from '../lib/server/composition-root';\nexport const deps = recoveryDeps;\n",
    );
    await expectReported('e2e-drives-the-product-from-outside', [[file, 'lib/server/composition-root.ts']]);
  },
  'unit-tests-run-without-a-database': async () => {
    const file = probe(
      'test/unit',
      "import { freshDatabase } from '../support/database';\nexport const f = freshDatabase;\n",
    );
    await expectReported('unit-tests-run-without-a-database', [[file, 'test/support/database.ts']]);
  },
  'scripts-are-plain-node': async () => {
    const file = probe(
      'scripts',
      "import { ROLES } from '../lib/domain/roles.ts';\nexport const roles = ROLES;\n",
      '.mjs',
    );
    await expectReported('scripts-are-plain-node', [[file, 'lib/domain/roles.ts']]);
  },
};

describe('dependency rules', () => {
  it('the tree breaks none of them', async () => {
    const violations = await violationsOf(['.']);
    expect(violations.map(brief)).toEqual([]);
  }, 120_000);

  for (const [rule, run] of Object.entries(cases)) {
    it(`reports a file breaking ${rule}`, run, 60_000);
  }

  it('every rule of the configuration has a case above', () => {
    const config = createRequire(import.meta.url)(configFile) as { forbidden: { name: string }[] };
    expect(Object.keys(cases).sort()).toEqual(config.forbidden.map((r) => r.name).sort());
  });
});
