/**
 * Lexer (reference §A): words, numbers, strings and escapes, operators, comments, and the
 * characters that are errors. Each mistake yields one E1xxx and a token the parser can still use.
 */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../engine/lang/lexer.js';

const kinds = (text: string): string[] => tokenize(text, 't.vague').tokens.map((t) => t.kind);
const texts = (text: string): string[] => tokenize(text, 't.vague').tokens.map((t) => t.text);

describe('tokenize', () => {
  it('lexes words as one kind, whatever they mean to the parser', () => {
    const { tokens, diagnostics } = tokenize('mission store from _x a_1 GET', 'a.vague');
    expect(diagnostics).toEqual([]);
    expect(tokens.map((t) => [t.kind, t.text])).toEqual([
      ['Word', 'mission'], ['Word', 'store'], ['Word', 'from'], ['Word', '_x'], ['Word', 'a_1'], ['Word', 'GET'], ['EOF', ''],
    ]);
  });

  it('records spans as UTF-16 offsets, end exclusive, with an empty EOF span at the end', () => {
    const { tokens } = tokenize('let  x = "é"', 'a.vague');
    expect(tokens.map((t) => t.span)).toEqual([
      { start: 0, end: 3 }, { start: 5, end: 6 }, { start: 7, end: 8 }, { start: 9, end: 12 }, { start: 12, end: 12 },
    ]);
  });

  it('lexes integers and decimals, and leaves `1..5` and `a.0` as separate tokens', () => {
    const { tokens } = tokenize('42 0.5 1..5', 'a.vague');
    expect(tokens.map((t) => [t.kind, t.number])).toEqual([
      ['Number', 42], ['Number', 0.5], ['Number', 1], ['..', NaN], ['Number', 5], ['EOF', NaN],
    ]);
  });

  it('decodes the four escapes and keeps any other escaped character literally', () => {
    const { tokens, diagnostics } = tokenize('"a\\nb\\tc\\\\d\\"e\\{f"', 'a.vague');
    expect(diagnostics).toEqual([]);
    expect(tokens[0]!.value).toBe('a\nb\tc\\d"e{f');
    expect(tokens[0]!.text).toBe('"a\\nb\\tc\\\\d\\"e\\{f"');
  });

  it('lets a string span lines and keeps `//` inside it', () => {
    const { tokens } = tokenize('"line1\nhttp://x" // gone', 'a.vague');
    expect(tokens.map((t) => t.kind)).toEqual(['String', 'EOF']);
    expect(tokens[0]!.value).toBe('line1\nhttp://x');
  });

  it('lexes every operator, two-character ones first', () => {
    expect(texts('.. ... => -> == != <= >= ?? < > = + - * / % ? | ^ : , . ( ) [ ] { }').slice(0, -1)).toEqual([
      '..', '...', '=>', '->', '==', '!=', '<=', '>=', '??', '<', '>', '=', '+', '-', '*', '/', '%', '?', '|', '^',
      ':', ',', '.', '(', ')', '[', ']', '{', '}',
    ]);
    expect(kinds('a->b')).toEqual(['Word', '->', 'Word', 'EOF']);
  });

  it('skips `//` comments to the end of the line, and a byte-order mark', () => {
    expect(texts('\uFEFFa // b c\nd')).toEqual(['a', 'd', '']);
  });

  it('reports an unterminated string at its opening quote and ends it at the line break', () => {
    const { tokens, diagnostics } = tokenize('get "/x\nlet a = 1', 'a.vague');
    expect(diagnostics.map((d) => [d.code, d.span.start, d.message])).toEqual([['E1002', 4, 'Unterminated string']]);
    expect(tokens.map((t) => t.kind)).toEqual(['Word', 'String', 'Word', 'Word', '=', 'Number', 'EOF']);
    expect(tokens[1]!.value).toBe('/x');
  });

  it('rejects `100_000` with a suggestion and still yields the number', () => {
    const { tokens, diagnostics } = tokenize('100_000', 'a.vague');
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'E1003', span: { start: 0, end: 7 }, help: 'write `100000`' });
    expect(diagnostics[0]!.message).toBe('Invalid number "100_000": digit separators "_" are not supported');
    expect(tokens.map((t) => [t.kind, t.number])).toEqual([['Number', 100000], ['EOF', NaN]]);
  });

  it('rejects letters glued to a number', () => {
    const { diagnostics } = tokenize('12abc', 'a.vague');
    expect(diagnostics.map((d) => [d.code, d.message])).toEqual([['E1003', 'Invalid number "12abc"']]);
  });

  it('rejects an exponent as one number, sign included, with the literal to write and its value', () => {
    for (const [text, help, value] of [
      ['2e-3', 'write `0.002`', 0.002],
      ['1E+5', 'write `100000`', 100000],
      ['12.50e1', 'write `125`', 125],
      ['1e-7', 'write `0.0000001`', 1e-7],
      ['2e22', 'write `parseNumber("2e22")`', 2e22],
      ['1.5e400', 'it is beyond the largest number a mission holds (about 1.8e308)', 0],
    ] as const) {
      const { tokens, diagnostics } = tokenize(`${text} - 1`, 'a.vague');
      expect(diagnostics.map((d) => [d.code, d.span.end, d.message, d.help]), text).toEqual([
        ['E1003', text.length, `Invalid number "${text}": a number literal takes no exponent`, help],
      ]);
      expect(tokens.map((t) => t.kind), text).toEqual(['Number', '-', 'Number', 'EOF']);
      expect(tokens[0]!.number, text).toBe(value);
    }
    // Without digits after it, an `e` is a letter glued to a number, as before.
    expect(tokenize('2e', 'a.vague').diagnostics.map((d) => d.message)).toEqual(['Invalid number "2e"']);
  });

  it('reports single quotes with a help line and still yields a string', () => {
    const { tokens, diagnostics } = tokenize(`'/x' y`, 'a.vague');
    expect(diagnostics.map((d) => [d.code, d.message, d.help])).toEqual([
      ['E1001', `Unexpected character "'"`, 'Reqon strings use double quotes: "…"'],
    ]);
    expect(tokens.map((t) => [t.kind, t.value])).toEqual([['String', '/x'], ['Word', 'y'], ['EOF', '']]);
  });

  it('reports `;`, `#`, `@`, `$`, backtick and `&` as unexpected characters', () => {
    for (const ch of [';', '#', '@', '$', '`', '&']) {
      const { diagnostics } = tokenize(`a ${ch} b`, 'a.vague');
      expect(diagnostics.map((d) => [d.code, d.span.start, d.message])).toEqual([['E1001', 2, `Unexpected character "${ch}"`]]);
    }
  });

  it('skips the rest of a `#` line so a would-be comment is one error', () => {
    const { tokens, diagnostics } = tokenize('# a comment\nb', 'a.vague');
    expect(diagnostics).toHaveLength(1);
    expect(tokens.map((t) => t.text)).toEqual(['b', '']);
  });

  it('reports `/*` once and skips to `*/`', () => {
    const { tokens, diagnostics } = tokenize('a /* b ; c */ d', 'a.vague');
    expect(diagnostics.map((d) => [d.code, d.span])).toEqual([['E1004', { start: 2, end: 4 }]]);
    expect(tokens.map((t) => t.text)).toEqual(['a', 'd', '']);
  });

  it('turns `&&` and `||` into `and` / `or` after reporting them, and a bare `!` into nothing', () => {
    const { tokens, diagnostics } = tokenize('a && b || !c', 'a.vague');
    expect(diagnostics.map((d) => d.help)).toEqual(['use `and`', 'use `or`', 'use `not` for negation']);
    expect(tokens.map((t) => t.text)).toEqual(['a', 'and', 'b', 'or', 'c', '']);
  });

  it('reports a run of non-ASCII characters once', () => {
    const { tokens, diagnostics } = tokenize('a →⇒¬« b', 'a.vague');
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]!.span).toEqual({ start: 2, end: 6 });
    expect(tokens.map((t) => t.text)).toEqual(['a', 'b', '']);
  });

  it('keeps a name with letters beyond ASCII whole, with one error naming it (no cascade after it)', () => {
    // Helper 66: `store données: …` was split at its é: `Expected ":" but found "es"`, then an unknown store `donn`.
    const { tokens, diagnostics } = tokenize('store données: x ébauche', 'a.vague');
    expect(tokens.map((t) => t.text)).toEqual(['store', 'données', ':', 'x', 'ébauche', '']);
    expect(diagnostics.map((d) => [d.code, d.span, d.message])).toEqual([
      ['E1001', { start: 6, end: 13 }, 'The name `données` has characters other than ASCII letters, digits and `_`'],
      ['E1001', { start: 17, end: 24 }, 'The name `ébauche` has characters other than ASCII letters, digits and `_`'],
    ]);
    expect(diagnostics[0]!.help).toMatch(/^names and keywords are ASCII: write `donnees`/);
    // A field's name is the API's: read as a string. Joiners and emoji inside a name keep it whole;
    // invisible characters are shown escaped, a long name cut.
    expect(tokenize('response.größe', 'a.vague').diagnostics[0]!.help).toBe('a field whose name has other characters is written as a string: `response["größe"]`, `{ "größe": … }`');
    expect(tokenize('{ größe: g }', 'a.vague').diagnostics[0]!.help).toMatch(/^a field whose name/);
    const joined = tokenize('store a\u200bb: x', 'a.vague');
    expect(joined.tokens.map((t) => t.text)).toEqual(['store', 'a\u200bb', ':', 'x', '']);
    expect(joined.diagnostics.map((d) => d.message)).toEqual(['The name `a\\u{200b}b` has characters other than ASCII letters, digits and `_`']);
    expect(tokenize('store 😀: x', 'a.vague').diagnostics).toHaveLength(1);
    expect(tokenize(`let ${'é'.repeat(5000)} = 1`, 'a.vague').diagnostics[0]!.message.length).toBeLessThan(120);
  });
});
