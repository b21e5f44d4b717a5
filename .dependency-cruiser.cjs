/**
 * Keel's layering, checked by `npm run lint:deps` (and so by `npm test`); test/unit/dependency-rules.test.ts
 * breaks each rule once on purpose and sees it reported.
 * docs/architecture.md#layer-rules says what each folder is for; these rules keep the arrows pointing inwards:
 * app/components -> services -> ports -> domain, with adapters built in one composition root and logging,
 * errors and metrics on a ground floor (lib/observability) that imports nothing above it.
 * `import type` counts everywhere (tsPreCompilationDeps): a type import couples the layers as surely as a value.
 * A rule compares resolved paths relative to the repository root ("@/..." is resolved through tsconfig.json).
 * @type {import('dependency-cruiser').IConfiguration}
 */

// The composition root: the one place that builds the Postgres adapters the console's services use,
// and starts the background work (and with it the demo runtime).
const COMPOSITION_ROOT = '^lib/server/composition-root\\.ts$';

// What the browser may load: components and the modules they take their shapes, URL state, query keys and
// fetches from. Each imports only these, the domain, the ports (pure interfaces) and server actions.
const CLIENT_SAFE = [
  '^components/',
  '^lib/domain/',
  '^lib/url-state/',
  '^lib/query-keys\\.ts$',
  '^lib/queries/[^/]+-types\\.ts$',
  '^lib/http/(read-json|same-origin-path)\\.ts$',
  '^lib/reads/(queries|read-query)\\.ts$',
];
const CLIENT_SAFE_MODULES = CLIENT_SAFE.filter((path) => path !== '^components/' && path !== '^lib/domain/');

// Packages that only run on the server: a client-safe module importing one is broken however it imports it.
const SERVER_PACKAGES = '^node_modules/(drizzle-orm|pg|pg-[a-z-]+|server-only|better-auth|pino|prom-client)/';

// Every folder of the product, for rules that name what a floor may not reach.
const ABOVE_THE_GROUND = '^lib/(adapters|auth|cli|config|db|demo|http|ports|queries|reads|server|services|simulator)/';

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
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that cannot be resolved would let every rule here pass unseen.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'lib/domain is pure TypeScript: it imports only itself, node:crypto (digests), zod (shared input ' +
        'schemas) and canonicalize (the canonical JSON of digests). Nothing of Next, Drizzle, pg, the server or ' +
        'the UI.',
      from: { path: '^lib/domain/' },
      to: { pathNot: ['^lib/domain/', '^node_modules/(zod|canonicalize)/', '^(node:)?crypto$'] },
    },
    {
      name: 'observability-is-the-ground-floor',
      severity: 'error',
      comment:
        'Logging, redaction, safe errors, request ids and metrics (lib/observability) are used by every floor, ' +
        'so they import only themselves and the domain: never the database, adapters, the server wiring or the UI.',
      from: { path: '^lib/observability/' },
      to: { path: ['^lib/', '^(app|components|test|e2e|bench|scripts|bin)/'], pathNot: '^lib/(domain|observability)/' },
    },
    {
      name: 'ports-are-interfaces',
      severity: 'error',
      comment:
        'A port (lib/ports, lib/simulator/ports) is an interface in domain terms: it imports domain types and ' +
        'other ports, nothing else.',
      from: { path: '^lib/(simulator/)?ports/' },
      to: { pathNot: ['^lib/domain/', '^lib/(simulator/)?ports/'] },
    },
    {
      name: 'foundations-stand-alone',
      severity: 'error',
      comment:
        'The settings (lib/config) and the database client, schemas and SQL fragments (lib/db) sit under ' +
        'everything that uses them: they import the domain, observability and each other, never a floor above.',
      from: { path: '^lib/(config|db)/' },
      to: {
        path: ['^lib/', '^(app|components)/'],
        pathNot: ['^lib/(domain|observability|config|db)/', '^lib/http/client-address\\.ts$'],
      },
    },
    {
      name: 'services-are-functions-of-their-ports',
      severity: 'error',
      comment:
        'Use cases take their ports as arguments (CONTRIBUTING.md#code-habits): they never reach adapters, the ' +
        'database, the server wiring, the read models, the simulator, app/ or components/, nor Next, Drizzle, pg ' +
        'or better-auth.',
      from: { path: '^lib/services/' },
      to: {
        path: [
          '^lib/(adapters|db|server|queries|reads|auth|workers|cli|demo|simulator|http|url-state)/',
          '^(app|components)/',
          '^node_modules/(next|drizzle-orm|pg|better-auth)/',
        ],
      },
    },
    {
      name: 'adapters-never-reach-up',
      severity: 'error',
      comment:
        'An adapter implements a port over the database: it imports ports, the domain, lib/db, observability and ' +
        'other adapters, never the services it serves, the server wiring, the workers, the simulator or the UI.',
      from: { path: '^lib/adapters/' },
      to: { path: ['^lib/(server|reads|services|workers|cli|demo|simulator)/', '^(app|components)/'] },
    },
    {
      name: 'queries-never-reach-up',
      severity: 'error',
      comment:
        'A read model (lib/queries) is a (db, filters) function: it never imports the server wiring, services, ' +
        'adapters, auth, the simulator, the demo or the UI, so a page, a route, a worker and a test can all call it.',
      from: { path: '^lib/queries/' },
      to: { path: ['^lib/(server|reads|services|adapters|auth|cli|demo|simulator)/', '^(app|components)/'] },
    },
    {
      name: 'workers-never-reach-the-wiring',
      severity: 'error',
      comment:
        'A background loop (lib/workers) is handed its database, ports and log by whoever starts it (the ' +
        'composition root, the demo runtime, a test); it never imports the server wiring, auth, the CLI, the demo, ' +
        'the simulator or the UI.',
      from: { path: '^lib/workers/' },
      to: { path: ['^lib/(server|reads|auth|cli|demo|simulator)/', '^(app|components)/'] },
    },
    {
      name: 'auth-never-reaches-the-wiring',
      severity: 'error',
      comment:
        'lib/auth is better-auth wiring only: it imports the database, settings, HTTP helpers, ports and ' +
        'observability, never adapters (it is handed them), services, read models, the server wiring or the UI.',
      from: { path: '^lib/auth/' },
      to: {
        path: ['^lib/(adapters|server|reads|services|queries|workers|cli|demo|simulator)/', '^(app|components)/'],
      },
    },
    {
      name: 'http-helpers-stand-alone',
      severity: 'error',
      comment:
        'lib/http (the front door, request guards, the browser fetch helper) is used by the server, auth and the ' +
        'browser alike: it imports the domain, URL state and itself, never the floors that use it.',
      from: { path: '^lib/http/' },
      to: { path: [ABOVE_THE_GROUND, '^lib/workers/', '^(app|components)/'], pathNot: '^lib/http/' },
    },
    {
      name: 'the-simulator-stands-apart',
      severity: 'error',
      comment:
        'The runtime simulator (lib/simulator) plays the systems Keel watches, over their own tables: it imports ' +
        'the domain, lib/db and observability, never the console (adapters, services, read models, server wiring).',
      from: { path: '^lib/simulator/' },
      to: {
        path: ['^lib/(adapters|ports|server|reads|services|queries|auth|workers|cli|demo|http|url-state)/'],
      },
    },
    {
      name: 'only-the-demo-uses-the-simulator',
      severity: 'error',
      comment:
        'The simulator is no part of the product: only the demo runtime, the keel command, the benches and the ' +
        'tests may import it.',
      from: { pathNot: ['^lib/simulator/', '^lib/(demo|cli)/', '^(bench|test)/'] },
      to: { path: '^lib/simulator/' },
    },
    {
      name: 'only-the-composition-root-starts-the-demo',
      severity: 'error',
      comment:
        'The demo (seed data and the demo runtime) is started by the composition root in demo mode and by the keel ' +
        'command; no page, route, action, service or adapter imports it. Tests may seed with it.',
      from: { pathNot: [COMPOSITION_ROOT, '^lib/(demo|cli)/', '^(test|e2e|bench)/'] },
      to: { path: '^lib/demo/' },
    },
    {
      name: 'only-entry-points-use-the-server-wiring',
      severity: 'error',
      comment:
        'lib/server (action(), page(), apiRoute(), sessions, the composition root) serves the entry points: app/, ' +
        'the read definitions (lib/reads), instrumentation.ts and the tests. Adapters, read models, workers, auth, ' +
        'services, the CLI and every lower floor never import it; what they need is handed to them.',
      from: { pathNot: ['^lib/(server|reads)/', '^app/', '^instrumentation\\.ts$', '^test/'] },
      to: { path: '^lib/server/' },
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
        ],
      },
      to: { path: '^lib/adapters/' },
    },
    {
      name: 'use-cases-run-through-actions',
      severity: 'error',
      comment:
        'A page or a route handler never calls a use case itself: mutations go through a server action ' +
        '(app/actions, wrapped by action(), which checks the permission and audits a refusal).',
      from: { path: '^app/', pathNot: '^app/actions/' },
      to: { path: '^lib/services/' },
    },
    {
      name: 'decisions-never-read-the-replica',
      severity: 'error',
      comment:
        'The read replica (lib/server/read-source.ts) is for list pages and list APIs only: actions, use cases, ' +
        'adapters and workers decide from the primary, so a takeover, a replay or a requeue never acts on a ' +
        'lagging row.',
      from: { path: '^(app/actions/|lib/(services|adapters|workers|cli|demo|simulator|ports|domain)/)' },
      // Reachable, not only imported: an action importing a module that reads lists is caught too.
      to: { path: '^lib/server/read-source\\.ts$', reachable: true },
    },
    {
      name: 'components-never-reach-the-server',
      severity: 'error',
      comment:
        'Components run (or may run) in the browser: they read through the read API and act through server ' +
        'actions (app/actions). They import only client-safe modules (the domain, URL state, query keys, the read ' +
        'shapes in lib/queries/*-types.ts, the fetch helper), never the database, adapters, the server wiring, ' +
        'services or auth, not even for a type.',
      from: { path: '^components/' },
      to: {
        path: ['^lib/', '^app/', SERVER_PACKAGES],
        pathNot: [...CLIENT_SAFE, '^lib/queries/', '^app/actions/'],
      },
    },
    {
      name: 'components-take-read-shapes-from-types-files',
      severity: 'error',
      comment:
        'The read models in lib/queries are server-only; the shapes and schemas a component needs live in the ' +
        '*-types.ts files beside them, which import nothing of the server. A type import counts.',
      from: { path: '^components/' },
      to: { path: '^lib/queries/', pathNot: '-types\\.ts$' },
    },
    {
      name: 'client-safe-modules-stay-client-safe',
      severity: 'error',
      comment:
        'What components import (URL state, query keys, the read shapes, the fetch helper) imports only other ' +
        'client-safe modules, the domain and the ports: so no chain of imports, type imports included, takes a ' +
        'component to the database or an adapter.',
      from: { path: CLIENT_SAFE_MODULES },
      to: {
        path: ['^lib/', '^(app|components)/', SERVER_PACKAGES],
        pathNot: [...CLIENT_SAFE_MODULES, '^lib/domain/', '^lib/ports/'],
      },
    },
    {
      name: 'the-product-never-imports-its-tests-and-tools',
      severity: 'error',
      comment:
        'Tests, end-to-end specs, benches and scripts use the product; the product never imports them, so none ' +
        'of their helpers or fixtures ships.',
      from: { pathNot: ['^(test|e2e|bench|scripts)/', '^(playwright|vitest)\\.config\\.ts$'] },
      to: { path: '^(test|e2e|bench|scripts)/' },
    },
    {
      name: 'e2e-drives-the-product-from-outside',
      severity: 'error',
      comment:
        'End-to-end specs drive the built console through the browser and HTTP, and look at the database: they ' +
        'never call the server wiring, adapters, services, workers or the simulator in-process, nor test/ helpers ' +
        'that do.',
      from: { path: '^e2e/' },
      to: { path: ['^lib/(server|reads|adapters|services|workers|simulator)/', '^components/'] },
    },
    {
      name: 'unit-tests-run-without-a-database',
      severity: 'error',
      comment:
        'test/unit is pure code and the shared vectors: it never opens a database (lib/db, adapters, the ' +
        'simulator adapters, test/support/database.ts); that is what test/integration is for.',
      from: { path: '^test/unit/' },
      to: { path: ['^lib/(db|adapters|simulator/adapters)/', '^test/support/database\\.ts$'] },
    },
    {
      name: 'scripts-are-plain-node',
      severity: 'error',
      comment:
        'scripts/ run under plain Node (CI, the image test, the budget check), without the TypeScript loader: ' +
        'they import Node and packages only, never the TypeScript sources.',
      from: { path: '^scripts/' },
      to: { path: ['^(lib|app|components|test|e2e|bench|bin)/', '\\.tsx?$'] },
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
