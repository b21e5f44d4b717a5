// First-load JavaScript per page of a production build, gzip-compressed, against a budget.
//
//   node scripts/bundle-budget.mjs [--dir .next] [--budget <kB>] [--chunks]
//
// A page's first load is what its HTML makes a modern browser fetch: the framework's
// root chunks (build-manifest.json rootMainFiles) and the client chunks of the page and
// of every layout above it (entryJSFiles of the page's client reference manifest, the
// list the server writes the <script> tags from). Polyfills are left out: they load
// only in browsers without ES modules. Each chunk is gzipped at level 9 (as Next's own
// size report did) and 1 kB is 1,000 bytes. Exits 1 when a page passes the budget.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';

/**
 * The budget `npm test` holds every page to: the largest page measured (176.0 kB,
 * /settlements, /settlements/dead-letters, /recovery/[id]) rounded up by about 1 kB, so
 * growth fails. The goal is 150 kB (docs/client-weight.md says what stands between).
 */
const BUDGET_KB = 181;

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
};
const dir = option('--dir') ?? '.next';
const budgetKb = Number(option('--budget') ?? BUDGET_KB);
const showChunks = args.includes('--chunks');

if (!existsSync(join(dir, 'BUILD_ID'))) {
  console.error(`[bundle] no production build in ${dir}: run \`next build\` (or the e2e tests, which build) first`);
  process.exit(2);
}

const rootMainFiles = JSON.parse(readFileSync(join(dir, 'build-manifest.json'), 'utf8')).rootMainFiles;

function manifests(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return manifests(path);
    return entry.name === 'page_client-reference-manifest.js' ? [path] : [];
  });
}

// Each manifest is a script assigning into globalThis.__RSC_MANIFEST; run it in an empty context.
const context = {};
context.globalThis = context;
for (const file of manifests(join(dir, 'server', 'app')))
  runInNewContext(readFileSync(file, 'utf8'), context, { filename: file });

const gzipped = new Map();
const size = (chunk) => {
  if (!gzipped.has(chunk)) gzipped.set(chunk, gzipSync(readFileSync(join(dir, chunk)), { level: 9 }).length);
  return gzipped.get(chunk);
};
const kb = (bytes) => (bytes / 1000).toFixed(1);

const rows = [];
for (const [entry, manifest] of Object.entries(context.__RSC_MANIFEST ?? {})) {
  // "/(console)/settlements/[receiptId]/page" is served at /settlements/[receiptId]; the error page only on an error.
  const route = entry.replace(/\/page$/, '').replace(/\/\([^/)]*\)/g, '') || '/';
  if (route === '/_global-error') continue;
  const own = [...new Set(Object.values(manifest.entryJSFiles ?? {}).flat())].filter(
    (chunk) => !rootMainFiles.includes(chunk),
  );
  const framework = rootMainFiles.reduce((sum, chunk) => sum + size(chunk), 0);
  const app = own.reduce((sum, chunk) => sum + size(chunk), 0);
  rows.push({ route, framework, app, total: framework + app, own });
}
if (rows.length === 0) {
  console.error(`[bundle] no page manifests under ${join(dir, 'server', 'app')}`);
  process.exit(2);
}
rows.sort((a, b) => a.route.localeCompare(b.route));

const width = Math.max(...rows.map((row) => row.route.length), 5);
console.log(`${'page'.padEnd(width)}  framework  layouts+page  first load (kB gzip)`);
for (const row of rows) {
  const over = row.total > budgetKb * 1000 ? `  OVER ${budgetKb} kB` : '';
  console.log(
    `${row.route.padEnd(width)}  ${kb(row.framework).padStart(9)}  ${kb(row.app).padStart(12)}  ` +
      `${kb(row.total).padStart(10)}${over}`,
  );
  if (showChunks) {
    for (const chunk of row.own)
      console.log(
        `${''.padEnd(width)}    ${kb(size(chunk)).padStart(7)}  ` +
          `${relative(dir, join(dir, chunk)).split(sep).join('/')}`,
      );
  }
}
const largest = rows.reduce((a, b) => (b.total > a.total ? b : a));
const over = rows.filter((row) => row.total > budgetKb * 1000);
console.log(
  `[bundle] largest first load: ${largest.route} ${kb(largest.total)} kB; ` +
    `budget ${budgetKb} kB; ${over.length} page(s) over`,
);
if (over.length > 0) process.exit(1);
