import { describe, expect, it } from 'vitest';
import {
  checkPathSegment,
  decodePathSegment,
  idPathSchema,
  malformedPathSegment,
  receiptPathSchema,
} from '../../lib/domain/path-segment';
import { refuseMalformedPath } from '../../lib/http/request-guards';

describe('decodePathSegment', () => {
  it('decodes exactly once', () => {
    expect(decodePathSegment('r%2F1')).toEqual({ ok: true, value: 'r/1' });
    expect(decodePathSegment('a%252F')).toEqual({ ok: true, value: 'a%2F' });
    expect(decodePathSegment('%E0%A4%A8')).toEqual({ ok: true, value: 'न' });
  });
  it('answers malformed encoding with a typed error instead of throwing', () => {
    for (const raw of ['%ZZ', '%E0%A4%A', '%', 'a%2', '%ED%A0%80', '%C0%AF', '%FF']) {
      const decoded = decodePathSegment(raw);
      expect(decoded.ok, raw).toBe(false);
      if (!decoded.ok) expect(decoded.error.code).toBe('MALFORMED_ENCODING');
    }
  });
  it('refuses NUL and controls once decoded, and overlong segments', () => {
    const nul = decodePathSegment('a%00b');
    expect(!nul.ok && nul.error.code).toBe('INVALID_TEXT');
    expect(!decodePathSegment('%0A').ok).toBe(true);
    const long = checkPathSegment('x'.repeat(1_001));
    expect(!long.ok && long.error.code).toBe('TOO_LONG');
    expect(checkPathSegment('x'.repeat(1_000)).ok).toBe(true);
  });
  it('finds the malformed segment of a whole path', () => {
    expect(malformedPathSegment('/api/settlements/receipts/%E0%A4%A')?.code).toBe('MALFORMED_ENCODING');
    expect(malformedPathSegment('/executions/%ZZ')?.code).toBe('MALFORMED_ENCODING');
    expect(malformedPathSegment('/settlements/a%00b')?.code).toBe('INVALID_TEXT');
    expect(malformedPathSegment('/settlements/r%2F1')).toBeNull();
    expect(malformedPathSegment('/executions/12')).toBeNull();
  });
});

describe('path schemas', () => {
  it('ids are positive integers Keel could have made', () => {
    expect(idPathSchema.parse({ id: '42' })).toEqual({ id: 42 });
    for (const id of ['0', '-1', '1e3', '01', ' 1', '1'.repeat(16), 'abc'])
      expect(idPathSchema.safeParse({ id }).success, id).toBe(false);
  });
  it('receipt ids are free text kept as given, without NUL', () => {
    expect(receiptPathSchema.parse({ receiptId: ' r 1 ' })).toEqual({ receiptId: ' r 1 ' });
    expect(receiptPathSchema.safeParse({ receiptId: 'r\u0000' }).success).toBe(false);
    expect(receiptPathSchema.safeParse({ receiptId: '' }).success).toBe(false);
  });
});

describe('proxy guards', () => {
  it('answers a malformed API path 400 as JSON and a page 400 as HTML', async () => {
    const api = refuseMalformedPath('/api/executions/%ZZ');
    expect(api?.status).toBe(400);
    expect(await api?.json()).toMatchObject({ code: 'INVALID_INPUT' });
    const page = refuseMalformedPath('/recovery/%ED%A0%80');
    expect(page?.status).toBe(400);
    expect(page?.headers.get('content-type')).toContain('text/html');
    expect(refuseMalformedPath('/executions/1')).toBeNull();
  });
});
