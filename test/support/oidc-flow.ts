import { expect } from 'vitest';

/** Cookies as a browser keeps them for one site. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0]!;
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  has(name: string): boolean {
    return this.cookies.has(name);
  }
}

/**
 * Where a browser's visit to the provider ended: back at `returnTo`
 * (the URL), at the provider's login form, or elsewhere.
 */
export type ProviderVisit =
  | { kind: 'returned'; url: string }
  | { kind: 'login-form'; url: string; html: string }
  | { kind: 'other'; url: string; status: number; html: string };

/**
 * Follows the provider's redirects with the browser's cookies for the provider (`jar`)
 * until the browser is sent to a URL starting with `returnTo`, or a page is shown.
 */
export async function visitProvider(
  url: string,
  jar: CookieJar,
  returnTo: string,
  init?: RequestInit,
): Promise<ProviderVisit> {
  let next: { url: string; init?: RequestInit } = { url, init };
  for (let hop = 0; hop < 15; hop += 1) {
    const response = await fetch(next.url, {
      ...next.init,
      redirect: 'manual',
      headers: { ...next.init?.headers, cookie: jar.header() },
    });
    jar.take(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, next.url).href;
      if (target.startsWith(returnTo)) return { kind: 'returned', url: target };
      next = { url: target };
      continue;
    }
    const html = await response.text();
    if (response.status === 200 && html.includes('name="login"')) return { kind: 'login-form', url: next.url, html };
    return { kind: 'other', url: next.url, status: response.status, html };
  }
  throw new Error('the provider redirected more than 15 times');
}

/** Fills the provider's login form (any password; the login is the subject) and follows it back to `returnTo`. */
export async function logInAtProvider(
  loginForm: { url: string; html: string },
  login: string,
  jar: CookieJar,
  returnTo: string,
): Promise<ProviderVisit> {
  const action = /action="([^"]+)"/.exec(loginForm.html)![1]!;
  return visitProvider(new URL(action, loginForm.url).href, jar, returnTo, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
  });
}

/** The hidden fields and action of an HTML form, by its id. */
export function formFields(html: string, formId: string): { action: string; fields: Record<string, string> } {
  const form = new RegExp(`<form[^>]*id="${formId}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!form) throw new Error(`no form ${formId}`);
  const action = /action="([^"]+)"/.exec(form[0])![1]!;
  const fields = Object.fromEntries(
    [...form[1]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
  );
  return { action, fields };
}

/**
 * Keel's start of an SSO sign-in, posted to its auth `surface` at `keelOrigin` with the browser's Keel cookies
 * (`keel`, which take the ones it sets): the provider URL it sends the browser to.
 */
export async function startSsoSignIn(
  surface: (request: Request) => Promise<Response>,
  keelOrigin: string,
  keel: CookieJar,
): Promise<string> {
  const response = await surface(
    new Request(`${keelOrigin}/api/auth/sign-in/social`, {
      method: 'POST',
      headers: { origin: keelOrigin, 'content-type': 'application/json', cookie: keel.header() },
      body: '{}',
    }),
  );
  expect(response.status).toBe(200);
  keel.take(response);
  return ((await response.json()) as { url: string }).url;
}
