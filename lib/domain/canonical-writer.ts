import { createHash } from 'node:crypto';
import { err, ok, type Result } from './result';

const MAX_U64 = (1n << 64n) - 1n;

/** The first value a writer could not encode; the writer keeps it instead of throwing. */
export type CanonicalWriterError =
  | { kind: 'InvalidU64'; value: string }
  | { kind: 'InvalidBytes' }
  | { kind: 'InvalidString' }
  | { kind: 'InvalidFlag' };

function describe(value: unknown): string {
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  return typeof value;
}

/**
 * The runtimes' length-prefixed canonical encoding (docs/design.md#canonical-writer): every string and
 * byte string is a u64 big-endian length then its bytes, every integer a u64
 * big-endian, an optional integer 0x00 or 0x01 then the u64. The tag goes first.
 *
 * Nothing here throws: a value that cannot be encoded (a negative, fractional,
 * non-finite or too large integer, a non-string, non-bytes) is remembered as the
 * writer's error, and `digestResult` returns it instead of a digest.
 */
export class CanonicalWriter {
  private readonly parts: Buffer[] = [];
  private problem: CanonicalWriterError | null = null;

  constructor(tag: string) {
    this.string(tag);
  }

  private fail(problem: CanonicalWriterError): this {
    this.problem ??= problem;
    return this;
  }

  u64(value: number | bigint): this {
    let big: bigint;
    if (typeof value === 'bigint') big = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
    else return this.fail({ kind: 'InvalidU64', value: describe(value) });
    if (big < 0n || big > MAX_U64) return this.fail({ kind: 'InvalidU64', value: describe(value) });
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64BE(big);
    this.parts.push(buf);
    return this;
  }

  bytes(value: Uint8Array): this {
    if (!(value instanceof Uint8Array)) return this.fail({ kind: 'InvalidBytes' });
    this.u64(value.byteLength);
    this.parts.push(Buffer.from(value));
    return this;
  }

  string(value: string): this {
    if (typeof value !== 'string') return this.fail({ kind: 'InvalidString' });
    return this.bytes(Buffer.from(value, 'utf8'));
  }

  optionalU64(value: number | bigint | null | undefined): this {
    if (value === null || value === undefined) {
      this.parts.push(Buffer.from([0]));
      return this;
    }
    this.parts.push(Buffer.from([1]));
    return this.u64(value);
  }

  flag(value: boolean): this {
    if (typeof value !== 'boolean') return this.fail({ kind: 'InvalidFlag' });
    return this.u64(value ? 1 : 0);
  }

  /** The encoded bytes so far, or the first value that could not be encoded. */
  encodedResult(): Result<Buffer, CanonicalWriterError> {
    return this.problem ? err(this.problem) : ok(Buffer.concat(this.parts));
  }

  /** SHA-256 of the encoding as lowercase hex, or the first value that could not be encoded. */
  digestResult(): Result<string, CanonicalWriterError> {
    const encoded = this.encodedResult();
    return encoded.ok ? ok(createHash('sha256').update(encoded.value).digest('hex')) : encoded;
  }
}
