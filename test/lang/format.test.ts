import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../engine/lang/diagnostics.js';
import { formatDiagnostic, formatDiagnostics, summarize } from '../../engine/lang/format.js';
import { LineIndex } from '../../engine/lang/line-index.js';

function diag(start: number, end: number, extra: Partial<Diagnostic> = {}): Diagnostic {
  return { code: 'E3007', severity: 'error', message: 'Unknown store `itmes`', file: 'm.vague', span: { start, end }, ...extra };
}

describe('LineIndex', () => {
  const text = 'ab\ncd\r\n\nxyz';
  const index = new LineIndex(text);

  it('maps offsets to 1-based lines and columns', () => {
    expect(index.position(0)).toEqual({ line: 1, column: 1 });
    expect(index.position(2)).toEqual({ line: 1, column: 3 }); // the LF itself
    expect(index.position(3)).toEqual({ line: 2, column: 1 });
    expect(index.position(7)).toEqual({ line: 3, column: 1 });
    expect(index.position(10)).toEqual({ line: 4, column: 3 });
    expect(index.lineCount).toBe(4);
  });

  it('clamps offsets outside the text', () => {
    expect(index.position(-5)).toEqual({ line: 1, column: 1 });
    expect(index.position(999)).toEqual({ line: 4, column: 4 });
  });

  it('gives line text without CR or LF', () => {
    expect(index.lineText(2)).toBe('cd');
    expect(index.lineText(3)).toBe('');
    expect(index.lineText(4)).toBe('xyz');
  });

  it('counts a tab as one column and a surrogate pair as one character', () => {
    const t = '\t😀x';
    expect(new LineIndex(t).position(t.indexOf('x'))).toEqual({ line: 1, column: 3 });
  });

  it('finds lines by binary search in a long file', () => {
    const long = Array.from({ length: 5000 }, (_, i) => `line${i}`).join('\n');
    const idx = new LineIndex(long);
    const at = long.indexOf('line4321');
    expect(idx.position(at + 2)).toEqual({ line: 4322, column: 3 });
  });
});

describe('formatDiagnostic', () => {
  it('renders the header, the numbered line, a caret as wide as the span and help', () => {
    const text = 'mission M {\n  store response -> itmes\n}';
    const start = text.indexOf('itmes');
    const out = formatDiagnostic(diag(start, start + 5, { help: 'did you mean `items`?' }), text);
    expect(out).toBe(
      [
        'm.vague:2:21: error[E3007]: Unknown store `itmes`',
        '   2 |   store response -> itmes',
        '     | ' + ' '.repeat(20) + '^^^^^',
        '   = help: did you mean `items`?',
      ].join('\n'),
    );
  });

  it('matches the layout of the reference example', () => {
    const lines = Array.from({ length: 11 }, () => '');
    lines.push('    get "/x" { paginate: offset(a,, 2) }');
    const text = lines.join('\n');
    const at = text.indexOf(',,') + 1;
    const out = formatDiagnostic(
      { code: 'E2001', severity: 'error', message: 'Expected ")" but found ","', file: 'h1.vague', span: { start: at, end: at + 1 } },
      text,
    );
    expect(out).toBe(
      [
        'h1.vague:12:35: error[E2001]: Expected ")" but found ","',
        '   12 |     get "/x" { paginate: offset(a,, 2) }',
        '      |                                   ^',
      ].join('\n'),
    );
  });

  it('says warning for warnings, and draws at least one caret for an empty span', () => {
    const out = formatDiagnostic(diag(3, 3, { severity: 'warning', code: 'E3004' }), 'abc');
    expect(out.split('\n')).toEqual(['m.vague:1:4: warning[E3004]: Unknown store `itmes`', '   1 | abc', '     |    ^']);
  });

  it('clips the caret at the end of the first line of a multi-line span', () => {
    const text = 'ab {\n  x\n}';
    const out = formatDiagnostic(diag(3, text.length), text);
    expect(out.split('\n')[2]).toBe('     |    ^');
  });

  it('keeps tabs in the caret padding so the caret stays aligned', () => {
    const out = formatDiagnostic(diag(2, 3), '\tx)');
    expect(out.split('\n').slice(1)).toEqual(['   1 | \tx)', '     | \t ^']);
  });

  it('renders a header alone when the text is unknown', () => {
    expect(formatDiagnostic(diag(0, 1, { help: 'h' }), undefined)).toBe('m.vague: error[E3007]: Unknown store `itmes`\n   = help: h');
  });
});

describe('formatDiagnostics and summarize', () => {
  it('separates blocks with a blank line and ends with a newline', () => {
    const texts = new Map([['m.vague', 'aa\nbb']]);
    const out = formatDiagnostics([diag(0, 1), diag(3, 4, { severity: 'warning' })], texts);
    expect(out).toBe(
      'm.vague:1:1: error[E3007]: Unknown store `itmes`\n   1 | aa\n     | ^\n\n' +
        'm.vague:2:1: warning[E3007]: Unknown store `itmes`\n   2 | bb\n     | ^\n',
    );
    expect(formatDiagnostics([], texts)).toBe('');
    expect(formatDiagnostics([diag(0, 2)], { 'm.vague': 'aa' })).toContain('^^');
  });

  it('counts errors and warnings', () => {
    expect(summarize([])).toBe('no errors');
    expect(summarize([diag(0, 1)])).toBe('1 error');
    expect(summarize([diag(0, 1), diag(0, 1), diag(0, 1, { severity: 'warning' })])).toBe('2 errors, 1 warning');
    expect(summarize([diag(0, 1, { severity: 'warning' }), diag(0, 1, { severity: 'warning' })])).toBe('no errors, 2 warnings');
  });
});

describe('excerpts of unusual lines (helper 38)', () => {
  it('shows a window of a very long line around the span, not the whole line', () => {
    const text = `let x = ${'a'.repeat(5_000_000)} bogus ${'b'.repeat(1000)}`;
    const at = text.indexOf('bogus');
    const out = formatDiagnostic(diag(at, at + 5), text);
    expect(out.length).toBeLessThan(1_000);
    const [, excerpt, caret] = out.split('\n');
    expect(excerpt).toMatch(/^ {3}1 \| …a+ bogus b+…$/);
    // The caret stands under `bogus` in the window shown.
    expect(excerpt!.slice(caret!.indexOf('^'), caret!.indexOf('^') + 5)).toBe('bogus');
    expect(caret!.trimEnd().endsWith('^^^^^')).toBe(true);
  });

  it('shows a control character as one column, so the caret stays under what it points at', () => {
    const text = 'let s = "\u001b[31m\u0007\u0000" bogus';
    const at = text.indexOf('bogus');
    const [, excerpt, caret] = formatDiagnostic(diag(at, at + 5), text).split('\n');
    expect(excerpt).not.toMatch(/[\u0000-\u0008\u001b]/);
    expect(excerpt!.slice(caret!.indexOf('^'), caret!.indexOf('^') + 5)).toBe('bogus');
  });

  it('never splits a surrogate pair at the window edge', () => {
    const text = `${'😀'.repeat(300)} bogus`;
    const at = text.indexOf('bogus');
    const [, excerpt] = formatDiagnostic(diag(at, at + 5), text).split('\n');
    expect(excerpt).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});
