import { z } from 'zod';
import type { OidcSettings } from '../config/oidc';
import { err, ok, type Result } from '../domain/result';

/** Where OpenID Connect Discovery puts an issuer's metadata. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

/** The part of a provider's discovery document Keel relies on. */
const providerMetadataSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  jwks_uri: z.url(),
  userinfo_endpoint: z.url().optional(),
  end_session_endpoint: z.url().optional(),
});
export type ProviderMetadata = z.infer<typeof providerMetadataSchema>;

export type DiscoveryError =
  /** No answer, or a server error: the provider may come back, so the start goes on. */
  | { code: 'OIDC_PROVIDER_UNREACHABLE'; message: string }
  /** An answer that is not this issuer's discovery document: a wrong KEEL_OIDC_ISSUER. */
  | { code: 'OIDC_DISCOVERY_INVALID'; message: string }
  | { code: 'OIDC_ISSUER_MISMATCH'; message: string };

const DISCOVERY_TIMEOUT_MS = 10_000;

/**
 * Fetches and checks the issuer's discovery document. Its `issuer` must be exactly
 * KEEL_OIDC_ISSUER (OpenID Connect Discovery 1.0, section 4.3): ID tokens are checked
 * against it, so a near miss (another host name for the same server, a missing tenant,
 * a trailing slash) would refuse every sign-in.
 */
export async function discoverProvider(
  issuer: string,
  timeoutMs = DISCOVERY_TIMEOUT_MS,
): Promise<Result<ProviderMetadata, DiscoveryError>> {
  const url = discoveryUrl(issuer);
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    return err({ code: 'OIDC_PROVIDER_UNREACHABLE', message: `${url} did not answer (${cause})` });
  }
  if (response.status >= 500) {
    return err({ code: 'OIDC_PROVIDER_UNREACHABLE', message: `${url} answered HTTP ${response.status}` });
  }
  const wrongIssuer = `KEEL_OIDC_ISSUER=${issuer} is not an OpenID provider's issuer`;
  if (!response.ok) {
    return err({ code: 'OIDC_DISCOVERY_INVALID', message: `${wrongIssuer}: ${url} answered HTTP ${response.status}` });
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return err({ code: 'OIDC_DISCOVERY_INVALID', message: `${wrongIssuer}: ${url} did not answer with JSON` });
  }
  const parsed = providerMetadataSchema.safeParse(body);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.')))].join(', ');
    return err({
      code: 'OIDC_DISCOVERY_INVALID',
      message: `${wrongIssuer}: ${url} is not a discovery document (missing or invalid: ${fields})`,
    });
  }
  if (parsed.data.issuer !== issuer) {
    return err({
      code: 'OIDC_ISSUER_MISMATCH',
      message:
        `KEEL_OIDC_ISSUER=${issuer}, but the provider's discovery document (${url}) ` +
        `names its issuer ${parsed.data.issuer}; set KEEL_OIDC_ISSUER to exactly that`,
    });
  }
  return ok(parsed.data);
}

const discovered = new Map<string, Promise<Result<ProviderMetadata, DiscoveryError>>>();

/** The provider's metadata for the server's own use: fetched once, again after a failure. */
export function providerMetadata(issuer: string): Promise<Result<ProviderMetadata, DiscoveryError>> {
  let found = discovered.get(issuer);
  if (!found) {
    found = discoverProvider(issuer);
    discovered.set(issuer, found);
    void found.then((result) => {
      if (!result.ok) discovered.delete(issuer);
    });
  }
  return found;
}

/**
 * The start's check of single sign-on: a provider whose discovery document is missing,
 * malformed or names another issuer stops the start with the returned line. An
 * unreachable one does not (the password sign-in of break-glass users must still work
 * while the provider is down): it is logged, and discovery is tried again at sign-in.
 */
export async function checkProviderAtStart(oidc: OidcSettings, log: (line: string) => void): Promise<string | null> {
  const found = await discoverProvider(oidc.issuer);
  if (found.ok) {
    const signOut = found.value.end_session_endpoint
      ? 'sign-out also ends the session at the provider'
      : 'the provider has no end_session_endpoint, so sign-out ends the Keel session only';
    log(`single sign-on: ${oidc.issuer} checked; ${signOut}`);
    return null;
  }
  if (found.error.code === 'OIDC_PROVIDER_UNREACHABLE') {
    log(`single sign-on: ${found.error.message}; checked again at the first sign-in`);
    return null;
  }
  return `[keel] refusing to start (${found.error.code}): ${found.error.message}`;
}
