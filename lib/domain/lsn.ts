/**
 * PostgreSQL write-ahead log positions (`pg_lsn`, written `16/B374D848`): two 32-bit
 * halves in hex. Compared as one 64-bit number.
 */
const LSN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

export class InvalidLsnError extends Error {
  override readonly name = 'InvalidLsnError';
}

export function isLsn(text: string): boolean {
  return LSN.test(text);
}

export function parseLsn(text: string): bigint {
  const match = LSN.exec(text);
  if (!match) throw new InvalidLsnError(`not a WAL position: ${JSON.stringify(text.slice(0, 40))}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareLsn(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
