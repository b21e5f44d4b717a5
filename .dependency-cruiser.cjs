/**
 * Keel's layering, checked by `npm run lint:deps` (and so by `npm test`).
 * docs/architecture.md says what each folder is for; these rules keep the arrows pointing inwards:
 * app/components -> services -> ports -> domain, with adapters built in one composition root.
 * A rule compares resolved paths relative to the repository root ("@/..." is resolved through tsconfig.json).
 * @type {import('dependency-cruiser').IConfiguration}
 */

// The composition root: the one place that builds the Postgres adapters the console's services use.
// lib/server/composition-root.ts is the name it may take; both are allowed so a rename needs no rule change.
const COMPOSITION_ROOT = '^lib/server/(services|composition-root)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules cannot be understood (or tested) one without the other.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'lib/domain is pure TypeScript: it imports only itself, node:crypto (digests), zod (shared input schemas) ' +
        'and canonicalize (the canonical JSON of digests). Nothing of Next, Drizzle, pg, the server or the UI.',
      from: { path: '^lib/domain/' },
      to: {
        pathNot: ['^lib/domain/', '^node_modules/(zod|canonicalize)/', '^(node:)?crypto$'],
      },
    },
    {
      name: 'ports-import-only-domain',
      severity: 'error',
      comment: 'A port is an interface in domain terms: it imports domain types and other ports, nothing else.',
      from: { path: '^lib/ports/' },
      to: { pathNot: ['^lib/domain/', '^lib/ports/'] },
    },
    {
      name: 'services-are-functions-of-their-ports',
      severity: 'error',
      comment:
        'Use cases take their ports as arguments (CONTRIBUTING.md#code-habits): they never reach adapters, the database, the ' +
        'server wiring, the read models, app/ or components/, nor Next, Drizzle, pg or better-auth.',
      from: { path: '^lib/services/' },
      to: {
        path: [
          '^lib/(adapters|db|server|queries|auth|workers|cli|demo)/',
          '^(app|components)/',
          '^node_modules/(next|drizzle-orm|pg|better-auth)/',
        ],
      },
    },
    {
      name: 'decisions-never-read-the-replica',
      severity: 'error',
      comment:
        'The read replica (lib/server/read-source.ts) is for list pages and list APIs only: actions, use cases, ' +
        'adapters and workers decide from the primary, so a takeover, a replay or a requeue never acts on a lagging row.',
      from: { path: '^(app/actions/|lib/(services|adapters|workers|cli|demo|ports|domain)/)' },
      // Reachable, not only imported: an action importing a module that reads lists is caught too.
      to: { path: '^lib/server/read-source\\.ts$', reachable: true },
    },
    {
      name: 'components-never-reach-the-server',
      severity: 'error',
      comment:
        'Components run (or may run) in the browser: they read through the read API and act through server ' +
        'actions (app/actions), never through adapters, the database, the server wiring, services or auth.',
      from: { path: '^components/' },
      to: {
        path: ['^lib/(adapters|db|server|services|auth|workers|cli|demo)/', '^node_modules/(drizzle-orm|pg)/'],
      },
    },
    {
      name: 'components-take-only-types-from-read-models',
      severity: 'error',
      comment:
        'The read models in lib/queries are server-only; a component may import their types, and values only ' +
        'from the *-types.ts files that hold the shapes and schemas shared with the client.',
      from: { path: '^components/' },
      to: { path: '^lib/queries/', pathNot: '-types\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-the-composition-root-builds-adapters',
      severity: 'error',
      comment:
        'Adapters are built in the composition root and handed to services. Besides it, the runtimes that have ' +
        'their own wiring (CLI, demo runtime, workers) and the tests and benches may build them.',
      from: {
        pathNot: [
          COMPOSITION_ROOT,
          '^lib/adapters/', // an adapter may compose another (the unit of work holds the repositories)
          '^lib/(cli|demo|workers)/', // processes with their own wiring: `keel` commands, the demo runtime, workers
          '^(test|bench)/',
          // Exceptions, each to be folded into the composition root (issue 11, item 3):
          '^app/actions/users\\.ts$', // builds the user unit of work and the password hasher itself
          '^app/api/auth/\\[\\.\\.\\.all\\]/route\\.ts$', // builds the sign-in lockout and SSO refusal log for the auth surface
          '^lib/server/action\\.ts$', // the action() wrapper builds the audit log that records refusals
          '^lib/queries/settlements\\.ts$', // reads bulk-replay jobs through the bulk-replay store
          '^lib/auth/http-surface\\.ts$', // type only: the SignInLockout interface lives in its adapter (no port yet)
        ],
      },
      to: { path: '^lib/adapters/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that cannot be resolved would let every rule above pass unseen.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules' },
    exclude: { path: '^(node_modules|\\.next|\\.keel|\\.git|drizzle|public|docs|test-results|playwright-report)/' },
    // `import type` counts: a type-only import of an adapter still couples the layers.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.tsx', '.mts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
