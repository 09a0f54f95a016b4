/**
 * CSV as RFC 4180 writes it, for files an operator opens in a spreadsheet: fields holding a comma,
 * a quote, CR or LF are quoted (quotes doubled), lines end in CRLF. Text fields are also guarded
 * against formula injection (OWASP, "CSV Injection"): one starting with `=`, `+`, `-`, `@`, a tab
 * or CR is prefixed with `'`, so a token name like `=HYPERLINK(…)` is shown, never run.
 */

/** One cell: text is guarded and quoted as needed; a number is written as it is (a negative figure stays a number). */
export type CsvCell = string | number | null;

const FORMULA = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

function cell(value: CsvCell): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = FORMULA.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The CSV text of a header row and data rows, every line ended by CRLF. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  const lines = [header.map(cell).join(',')];
  for (const row of rows) lines.push(row.map(cell).join(','));
  return lines.join('\r\n') + '\r\n';
}
