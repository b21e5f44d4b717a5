/** A stand-in origin: only the path part of the answer is used. */
const BASE = 'http://keel.invalid';

/**
 * The path a `next` parameter may send the browser to after sign-in: it must
 * resolve, against the console's own origin, to that same origin, the way a
 * browser resolves it (backslashes as slashes, tabs and newlines dropped). The
 * normalized path is returned, so what is checked is what is followed; anything
 * else, including a path that would normalize to `//host`, gives `/`.
 */
export function sameOriginPath(next: string | null | undefined, base: string = BASE): string {
  if (typeof next !== 'string' || !next.startsWith('/')) return '/';
  // Control characters and backslashes have no place in a console path.
  if (/[\u0000-\u001f\u007f\\]/.test(next)) return '/';
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return '/';
  }
  if (url.origin !== new URL(base).origin) return '/';
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (!path.startsWith('/') || path.startsWith('//') || path.startsWith('/\\')) return '/';
  return path;
}
