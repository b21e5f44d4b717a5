/**
 * CSV per RFC 4180: CRLF line ends, and a field holding a comma, quote, CR or LF is
 * quoted with its quotes doubled.
 *
 * A field that a spreadsheet would read as a formula (it starts with =, +, -, @, or
 * a tab or CR, which some spreadsheets strip before looking) gets a leading single
 * quote, so an exported audit reason such as `=HYPERLINK(...)` stays text
 * (OWASP "CSV injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvRow = (fields: readonly (string | number | boolean | null | undefined)[]): string =>
  `${fields.map(csvField).join(',')}\r\n`;
