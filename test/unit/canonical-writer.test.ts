import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CanonicalWriter } from '@/lib/domain/canonical-writer';

const hex = (writer: CanonicalWriter): string => writer.encoded().toString('hex');
const u64Hex = (value: number): string => value.toString(16).padStart(16, '0');

describe('CanonicalWriter', () => {
  it('writes the tag first, as a length-prefixed string', () => {
    expect(hex(new CanonicalWriter('ab'))).toBe(`${u64Hex(2)}6162`);
  });

  it('writes integers as u64 big-endian', () => {
    expect(hex(new CanonicalWriter('').u64(258))).toBe(`${u64Hex(0)}0000000000000102`);
    expect(hex(new CanonicalWriter('').u64(0))).toBe(`${u64Hex(0)}${u64Hex(0)}`);
  });

  it('accepts the full u64 range as bigint and refuses values outside it', () => {
    expect(hex(new CanonicalWriter('').u64((1n << 64n) - 1n))).toBe(`${u64Hex(0)}ffffffffffffffff`);
    expect(() => new CanonicalWriter('').u64(-1)).toThrow(RangeError);
    expect(() => new CanonicalWriter('').u64(1n << 64n)).toThrow(RangeError);
  });

  it('prefixes strings with their UTF-8 byte length, not their character count', () => {
    expect(hex(new CanonicalWriter('').string('é'))).toBe(`${u64Hex(0)}${u64Hex(2)}c3a9`);
  });

  it('prefixes byte strings with their length', () => {
    expect(hex(new CanonicalWriter('').bytes(Uint8Array.from([0xde, 0xad])))).toBe(`${u64Hex(0)}${u64Hex(2)}dead`);
    expect(hex(new CanonicalWriter('').bytes(new Uint8Array(0)))).toBe(`${u64Hex(0)}${u64Hex(0)}`);
  });

  it('writes an absent optional integer as 0x00 and a present one as 0x01 then the u64', () => {
    expect(hex(new CanonicalWriter('').optionalU64(null))).toBe(`${u64Hex(0)}00`);
    expect(hex(new CanonicalWriter('').optionalU64(undefined))).toBe(`${u64Hex(0)}00`);
    expect(hex(new CanonicalWriter('').optionalU64(0))).toBe(`${u64Hex(0)}01${u64Hex(0)}`);
    expect(hex(new CanonicalWriter('').optionalU64(7n))).toBe(`${u64Hex(0)}01${u64Hex(7)}`);
  });

  it('writes flags as the integers 0 and 1', () => {
    expect(hex(new CanonicalWriter('').flag(true).flag(false))).toBe(`${u64Hex(0)}${u64Hex(1)}${u64Hex(0)}`);
  });

  it('keeps fields in call order, so neighbouring strings cannot run together', () => {
    const ab = new CanonicalWriter('t').string('a').string('bc').digestHex();
    const abc = new CanonicalWriter('t').string('ab').string('c').digestHex();
    expect(ab).not.toBe(abc);
  });

  it('digests the encoded bytes with SHA-256 as lowercase hex', () => {
    const writer = new CanonicalWriter('tag').u64(1).string('x');
    const expected = createHash('sha256').update(writer.encoded()).digest('hex');
    expect(writer.digestHex()).toBe(expected);
    expect(writer.digest().toString('hex')).toBe(expected);
    expect(writer.digestHex()).toMatch(/^[0-9a-f]{64}$/);
  });
});
