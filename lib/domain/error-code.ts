/**
 * The SCREAMING_SNAKE code a server action returns for a PascalCase error kind
 * (docs/design.md#results-and-error-codes): `StaleLease` -> `STALE_LEASE`. A run of capitals stays one word
 * (`HTTPTimeout` -> `HTTP_TIMEOUT`), so codes stay stable when kinds hold acronyms.
 */
export function toErrorCode(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toUpperCase();
}
