import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * Which HTTP methods each route handler answers, read from the route files themselves
 * (`export const GET = ...`, `export async function GET`, `export { handle as GET }`),
 * so the front door can answer any other method with 405 and an `Allow` header
 * instead of leaving it to Next.js, which answers a method it does not know (TRACE,
 * PROPFIND, ...) with 500. Pages answer GET and HEAD, and POST for server actions.
 */

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export const PAGE_METHODS: readonly string[] = ['GET', 'HEAD', 'POST'];
export const FILE_METHODS: readonly string[] = ['GET', 'HEAD'];

export interface RouteMethods {
  /** `/api/executions/[id]` and the methods its handler exports (HEAD beside GET, as Next.js adds it). */
  readonly routes: readonly { pattern: string; matcher: RegExp; methods: readonly string[] }[];
}

const EXPORTED = /export\s+(?:const|let|async\s+function|function)\s+(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\b/g;
const RE_EXPORTED = /export\s*\{([^}]*)\}/g;
const AS_METHOD = /\bas\s+(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\b|^\s*(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\s*$/;

/** The methods a route file exports, in HTTP_METHODS order. */
export function exportedMethods(source: string): string[] {
  const found = new Set<string>();
  for (const match of source.matchAll(EXPORTED)) found.add(match[1]!);
  for (const match of source.matchAll(RE_EXPORTED)) {
    for (const name of match[1]!.split(',')) {
      const method = AS_METHOD.exec(name);
      if (method) found.add((method[1] ?? method[2])!);
    }
  }
  if (found.has('GET')) found.add('HEAD');
  return HTTP_METHODS.filter((method) => found.has(method));
}

/** `/api/executions/[id]` as a matcher of one path: `[x]` is one segment, `[...x]` one or more. */
function patternMatcher(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((segment) => {
      if (/^\[\.\.\.[^\]]+\]$/.test(segment)) return '[^/]+(?:/[^/]+)*';
      if (/^\[[^\]]+\]$/.test(segment)) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}/?$`);
}

function routeFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...routeFiles(path));
    else if (/^route\.(ts|tsx|js|mjs)$/.test(entry.name)) files.push(path);
  }
  return files;
}

/**
 * Reads every `app/**\/route.ts` under the project directory.
 * Throws when there are none: a server without them is broken.
 */
export function readRouteMethods(projectDir: string): RouteMethods {
  const appDir = join(projectDir, 'app');
  const routes = routeFiles(appDir).map((file) => {
    const pattern =
      '/' +
      relative(appDir, file)
        .split(sep)
        .slice(0, -1)
        // Route groups, `(console)`, are not part of the path.
        .filter((segment) => !/^\(.*\)$/.test(segment))
        .join('/');
    return { pattern, matcher: patternMatcher(pattern), methods: exportedMethods(readFileSync(file, 'utf8')) };
  });
  if (routes.length === 0) throw new Error(`no route handlers under ${appDir}`);
  // Static segments before dynamic ones, as Next.js routes them.
  routes.sort((a, b) => dynamicWeight(a.pattern) - dynamicWeight(b.pattern) || b.pattern.length - a.pattern.length);
  return { routes };
}

const dynamicWeight = (pattern: string) => (pattern.includes('[...') ? 2 : pattern.includes('[') ? 1 : 0);

/**
 * The methods a path answers: its route handler's, a page's, or null for a path under
 * /api that no handler serves (Next.js answers it 404).
 */
export function allowedMethods(table: RouteMethods, pathname: string): readonly string[] | null {
  const route = table.routes.find((r) => r.matcher.test(pathname));
  if (route) return route.methods;
  return pathname === '/api' || pathname.startsWith('/api/') ? null : PAGE_METHODS;
}
