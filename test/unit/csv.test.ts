import { describe, expect, it } from 'vitest';
import { csvField, csvRow } from '../../lib/domain/csv';

describe('CSV (RFC 4180) with formula-injection guard', () => {
  it('quotes fields holding commas, quotes, CR or LF, doubling quotes, and ends rows with CRLF', () => {
    expect(csvRow(['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere'])).toBe(
      'plain,"a,b","say ""hi""","two\nlines","cr\rhere"\r\n',
    );
  });

  it('writes null and undefined as empty fields and numbers as they are', () => {
    expect(csvRow([null, undefined, 42, -3, 0])).toBe(',,42,-3,0\r\n');
  });

  it('prefixes text a spreadsheet would run as a formula with a single quote', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r'])
      expect(csvField(`${start}SUM(A1)`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvField('-1')).toBe("'-1");
    expect(csvField('a=b')).toBe('a=b');
    expect(csvField("'already")).toBe("'already");
  });

  it('round-trips through a strict RFC 4180 reader', () => {
    const rows = [
      ['id', 'reason'],
      ['1', 'line one\r\nline "two", end'],
      ['2', '@mention'],
    ];
    const text = rows.map(csvRow).join('');
    expect(parseCsv(text)).toEqual([
      ['id', 'reason'],
      ['1', 'line one\r\nline "two", end'],
      ['2', "'@mention"],
    ]);
  });
});

/** A minimal RFC 4180 reader, independent of the writer under test. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 1);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), (i += 1);
    else field += c;
  }
  return rows;
}
