import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CanonicalWriter } from '@/lib/domain/canonical-writer';

function encoded(writer: CanonicalWriter): Buffer {
  const result = writer.encodedResult();
  if (!result.ok) throw new Error(`unexpected writer error ${result.error.kind}`);
  return result.value;
}
const hex = (writer: CanonicalWriter): string => encoded(writer).toString('hex');
const digestHex = (writer: CanonicalWriter): string => {
  const result = writer.digestResult();
  if (!result.ok) throw new Error(`unexpected writer error ${result.error.kind}`);
  return result.value;
};
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
    // A value outside it is the writer's typed error, never a throw.
    expect(new CanonicalWriter('').u64(-1).digestResult()).toEqual({
      ok: false,
      error: { kind: 'InvalidU64', value: '-1' },
    });
    expect(new CanonicalWriter('').u64(1n << 64n).encodedResult()).toEqual({
      ok: false,
      error: { kind: 'InvalidU64', value: String(1n << 64n) },
    });
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
    const ab = digestHex(new CanonicalWriter('t').string('a').string('bc'));
    const abc = digestHex(new CanonicalWriter('t').string('ab').string('c'));
    expect(ab).not.toBe(abc);
  });

  it('digests the encoded bytes with SHA-256 as lowercase hex', () => {
    const writer = new CanonicalWriter('tag').u64(1).string('x');
    const expected = createHash('sha256').update(encoded(writer)).digest('hex');
    expect(digestHex(writer)).toBe(expected);
    expect(digestHex(writer)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each<[string, (w: CanonicalWriter) => CanonicalWriter, string]>([
    ['NaN', (w) => w.u64(Number.NaN), 'InvalidU64'],
    ['a fraction', (w) => w.u64(1.5), 'InvalidU64'],
    ['Infinity', (w) => w.optionalU64(Number.POSITIVE_INFINITY), 'InvalidU64'],
    ['an unsafe integer', (w) => w.u64(2 ** 60), 'InvalidU64'],
    ['undefined as u64', (w) => w.u64(undefined as unknown as number), 'InvalidU64'],
    ['a string as u64', (w) => w.u64('7' as unknown as number), 'InvalidU64'],
    ['undefined as a string', (w) => w.string(undefined as unknown as string), 'InvalidString'],
    ['a number as bytes', (w) => w.bytes(5 as unknown as Uint8Array), 'InvalidBytes'],
    ['a string as a flag', (w) => w.flag('yes' as unknown as boolean), 'InvalidFlag'],
  ])('keeps %s as a typed error and never throws', (_name, write, kind) => {
    let result: unknown;
    expect(() => {
      result = write(new CanonicalWriter('t').string('before')).string('after').digestResult();
    }).not.toThrow();
    expect(result).toMatchObject({ ok: false, error: { kind } });
  });
});
