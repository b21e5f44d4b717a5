import { createHash } from 'node:crypto';

const MAX_U64 = (1n << 64n) - 1n;

/**
 * The runtimes' length-prefixed canonical encoding (DESIGN.md 4.2): every string and
 * byte string is a u64 big-endian length then its bytes, every integer a u64
 * big-endian, an optional integer 0x00 or 0x01 then the u64. The tag goes first.
 */
export class CanonicalWriter {
  private readonly parts: Buffer[] = [];

  constructor(tag: string) {
    this.string(tag);
  }

  u64(value: number | bigint): this {
    const big = BigInt(value);
    if (big < 0n || big > MAX_U64) throw new RangeError(`u64 out of range: ${big}`);
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64BE(big);
    this.parts.push(buf);
    return this;
  }

  bytes(value: Uint8Array): this {
    this.u64(value.byteLength);
    this.parts.push(Buffer.from(value));
    return this;
  }

  string(value: string): this {
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
    return this.u64(value ? 1 : 0);
  }

  /** The encoded bytes so far. */
  encoded(): Buffer {
    return Buffer.concat(this.parts);
  }

  digest(): Buffer {
    return createHash('sha256').update(this.encoded()).digest();
  }

  digestHex(): string {
    return this.digest().toString('hex');
  }
}
