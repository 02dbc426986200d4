/**
 * The Reqon lexer: text → tokens, by char code, one pass, no regular expressions.
 *
 * Layout is insignificant (newlines are whitespace), only `//` comments exist, strings use double
 * quotes. Invariants: the lexer never throws and always advances; every mistake becomes one
 * diagnostic (E1xxx) and lexing continues with a token that lets the parser carry on as if the
 * author had written the obvious fix (a single-quoted string still yields a `String` token,
 * `100_000` still yields a `Number`), so one slip gives one error.
 */
import type { Span } from './ast.js';
import { DiagnosticBag, type Diagnostic } from './diagnostics.js';
import type { PunctKind, Token } from './token.js';

export function tokenize(text: string, file: string): { tokens: Token[]; diagnostics: Diagnostic[] } {
  const bag = new DiagnosticBag(file);
  const tokens = lexInto(text, bag);
  return { tokens, diagnostics: bag.items };
}

// Character classes for ASCII, looked up by char code.
const WORD_START = 1;
const DIGIT = 2;
const CLASS = new Uint8Array(128);
for (let c = 65; c <= 90; c++) CLASS[c] = WORD_START;
for (let c = 97; c <= 122; c++) CLASS[c] = WORD_START;
CLASS[95] = WORD_START; // _
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT;

function isWordPart(c: number): boolean {
  return c < 128 && CLASS[c] !== 0;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Tokenizes `text`, reporting into `bag`; shared with the parser so both use one bag. */
export function lexInto(text: string, bag: DiagnosticBag): Token[] {
  const tokens: Token[] = [];
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not content

  let kind: PunctKind | undefined;
  let len = 1;

  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11) {
      i++;
      continue;
    }
    const start = i;
    if (c < 128 && CLASS[c] === WORD_START) {
      i++;
      while (i < n && isWordPart(text.charCodeAt(i))) i++;
      const word = text.slice(start, i);
      tokens.push({ kind: 'Word', text: word, value: word, number: NaN, span: { start, end: i } });
      continue;
    }
    if (isDigit(c)) {
      i = lexNumber(text, start, tokens, bag);
      continue;
    }
    switch (c) {
      case 34: // "
        i = lexString(text, start, tokens, bag);
        continue;
      case 123: kind = '{'; len = 1; break;
      case 125: kind = '}'; len = 1; break;
      case 40: kind = '('; len = 1; break;
      case 41: kind = ')'; len = 1; break;
      case 91: kind = '['; len = 1; break;
      case 93: kind = ']'; len = 1; break;
      case 44: kind = ','; len = 1; break;
      case 58: kind = ':'; len = 1; break;
      case 43: kind = '+'; len = 1; break;
      case 42: kind = '*'; len = 1; break;
      case 37: kind = '%'; len = 1; break;
      case 94: kind = '^'; len = 1; break;
      case 124: // | and `||`, which stands for `or` after the error
        if (text.charCodeAt(i + 1) === 124) {
          bag.error('E1001', { start, end: start + 2 }, 'Unexpected characters "||"', 'use `or`');
          tokens.push({ kind: 'Word', text: 'or', value: 'or', number: NaN, span: { start, end: start + 2 } });
          i += 2;
        } else (kind = '|'), (len = 1);
        break;
      case 63: // ? ??
        if (text.charCodeAt(i + 1) === 63) (kind = '??'), (len = 2);
        else (kind = '?'), (len = 1);
        break;
      case 46: // . .. ...
        if (text.charCodeAt(i + 1) === 46) {
          if (text.charCodeAt(i + 2) === 46) (kind = '...'), (len = 3);
          else (kind = '..'), (len = 2);
        } else (kind = '.'), (len = 1);
        break;
      case 45: // - ->
        if (text.charCodeAt(i + 1) === 62) (kind = '->'), (len = 2);
        else (kind = '-'), (len = 1);
        break;
      case 61: { // = => ==
        const d = text.charCodeAt(i + 1);
        if (d === 62) (kind = '=>'), (len = 2);
        else if (d === 61) (kind = '=='), (len = 2);
        else (kind = '='), (len = 1);
        break;
      }
      case 60: // < <=
        if (text.charCodeAt(i + 1) === 61) (kind = '<='), (len = 2);
        else (kind = '<'), (len = 1);
        break;
      case 62: // > >=
        if (text.charCodeAt(i + 1) === 61) (kind = '>='), (len = 2);
        else (kind = '>'), (len = 1);
        break;
      case 33: // != (a bare ! is not an operator)
        if (text.charCodeAt(i + 1) === 61) (kind = '!='), (len = 2);
        else {
          bag.error('E1001', { start, end: start + 1 }, 'Unexpected character "!"', 'use `not` for negation');
          i++;
        }
        break;
      case 47: { // / // /*
        const d = text.charCodeAt(i + 1);
        if (d === 47) {
          const nl = text.indexOf('\n', i + 2);
          i = nl < 0 ? n : nl + 1;
        } else if (d === 42) {
          const close = text.indexOf('*/', i + 2);
          const end = close < 0 ? n : close + 2;
          bag.error(
            'E1004',
            { start, end: start + 2 },
            'Unexpected characters "/*": Reqon has only `//` line comments',
            'start each comment line with `//`',
          );
          i = end;
        } else (kind = '/'), (len = 1);
        break;
      }
      case 39: // ' — lexed as a string so the parser carries on, but reported
        i = lexSingleQuoted(text, start, tokens, bag);
        continue;
      case 35: { // # — probably meant as a comment: skip the line so only one error appears
        bag.error('E1001', { start, end: start + 1 }, 'Unexpected character "#"', 'Reqon comments start with `//`');
        const nl = text.indexOf('\n', i + 1);
        i = nl < 0 ? n : nl + 1;
        continue;
      }
      case 59: // ;
        bag.error('E1001', { start, end: start + 1 }, 'Unexpected character ";"', 'Reqon needs no `;` between statements: remove it');
        i++;
        continue;
      case 38: // & && — `&&` stands for `and` after the error, so the expression still parses
        if (text.charCodeAt(i + 1) === 38) {
          bag.error('E1001', { start, end: start + 2 }, 'Unexpected characters "&&"', 'use `and`');
          tokens.push({ kind: 'Word', text: 'and', value: 'and', number: NaN, span: { start, end: start + 2 } });
          i += 2;
        } else {
          bag.error('E1001', { start, end: start + 1 }, 'Unexpected character "&"', 'use `and`');
          i++;
        }
        continue;
      case 96: // `
        bag.error('E1001', { start, end: start + 1 }, 'Unexpected character "`"', 'Reqon strings use double quotes: "…"');
        i++;
        continue;
      default:
        i = unexpectedRun(text, start, bag);
        continue;
    }
    if (kind !== undefined) {
      tokens.push({ kind, text: kind, value: kind, number: NaN, span: { start, end: start + len } });
      i = start + len;
      kind = undefined;
    }
  }
  tokens.push({ kind: 'EOF', text: '', value: '', number: NaN, span: { start: n, end: n } });
  return tokens;
}

/** `digits` or `digits.digits`; letters, `_` or digits glued to a number make it malformed. */
function lexNumber(text: string, start: number, tokens: Token[], bag: DiagnosticBag): number {
  const n = text.length;
  let i = start + 1;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) === 46 && isDigit(text.charCodeAt(i + 1))) {
    i += 2;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
  }
  const goodEnd = i;
  if (i < n && isWordPart(text.charCodeAt(i))) {
    // Swallow the whole malformed run (`100_000`, `12abc`, `1_000.5`) as one bad number.
    while (i < n) {
      const c = text.charCodeAt(i);
      if (isWordPart(c)) i++;
      else if (c === 46 && isDigit(text.charCodeAt(i + 1))) i += 2;
      else break;
    }
    const raw = text.slice(start, i);
    const span: Span = { start, end: i };
    const stripped = raw.replace(/_/g, '');
    if (raw.includes('_') && /^\d+(\.\d+)?$/.test(stripped)) {
      bag.error('E1003', span, `Invalid number "${raw}": digit separators "_" are not supported`, `write \`${stripped}\``);
      tokens.push({ kind: 'Number', text: raw, value: raw, number: parseFloat(stripped), span });
    } else {
      bag.error('E1003', span, `Invalid number "${raw}"`, 'a number is digits with an optional fraction (`12`, `0.5`); a name cannot start with a digit');
      tokens.push({ kind: 'Number', text: raw, value: raw, number: parseFloat(text.slice(start, goodEnd)), span });
    }
    return i;
  }
  const raw = text.slice(start, i);
  tokens.push({ kind: 'Number', text: raw, value: raw, number: parseFloat(raw), span: { start, end: i } });
  return i;
}

/** A double-quoted string: `\n \t \\ \"` are escapes, any other escaped character stands for itself. */
function lexString(text: string, start: number, tokens: Token[], bag: DiagnosticBag): number {
  const n = text.length;
  let i = start + 1;
  let segment = i;
  let parts: string[] | undefined;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34) break;
    if (c === 92) {
      parts ??= [];
      parts.push(text.slice(segment, i));
      if (i + 1 < n) {
        const e = text.charCodeAt(i + 1);
        parts.push(e === 110 ? '\n' : e === 116 ? '\t' : text[i + 1]!);
        i += 2;
      } else i++;
      segment = i;
      continue;
    }
    i++;
  }
  if (i >= n) {
    // No closing quote anywhere: report it, and end the string at its first line break so the
    // rest of the file still lexes (one error instead of a file swallowed by the string).
    bag.error('E1002', { start, end: start + 1 }, 'Unterminated string', 'add the closing `"`');
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? n : nl;
    const raw = text.slice(start, end);
    tokens.push({ kind: 'String', text: raw, value: raw.slice(1), number: NaN, span: { start, end } });
    return end;
  }
  const body = text.slice(segment, i);
  const value = parts === undefined ? body : (parts.push(body), parts.join(''));
  const end = i + 1;
  tokens.push({ kind: 'String', text: text.slice(start, end), value, number: NaN, span: { start, end } });
  return end;
}

/** `'text'`: reported, then kept as a string (up to the closing quote on the same line). */
function lexSingleQuoted(text: string, start: number, tokens: Token[], bag: DiagnosticBag): number {
  const n = text.length;
  let i = start + 1;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 39 || c === 10) break;
    i++;
  }
  const closed = i < n && text.charCodeAt(i) === 39;
  const end = closed ? i + 1 : i;
  bag.error('E1001', { start, end: start + 1 }, `Unexpected character "'"`, 'Reqon strings use double quotes: "…"');
  const value = text.slice(start + 1, i);
  tokens.push({ kind: 'String', text: text.slice(start, end), value, number: NaN, span: { start, end } });
  return end;
}

/** A run of characters that start no token (random bytes, non-ASCII letters): one error for the run. */
function unexpectedRun(text: string, start: number, bag: DiagnosticBag): number {
  const n = text.length;
  let i = start;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 128 && !isStray(c)) break;
    i++;
  }
  if (i === start) i = start + 1;
  const shown = printable(text.slice(start, Math.min(i, start + 12)));
  const more = i - start > 12 ? '…' : '';
  const plural = i - start > 1 ? 'characters' : 'character';
  bag.error('E1001', { start, end: i }, `Unexpected ${plural} "${shown}${more}"`, 'names and keywords are ASCII letters, digits and `_`');
  return i;
}

/** ASCII characters that no rule handles (control characters, `~`, `\`, `@`, `$`). */
function isStray(c: number): boolean {
  return c < 32 ? c !== 10 && c !== 9 && c !== 13 && c !== 12 && c !== 11 : c === 126 || c === 92 || c === 64 || c === 36 || c === 127;
}

function printable(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out += cp < 32 || cp === 127 || (cp >= 0xd800 && cp <= 0xdfff) ? `\\u{${cp.toString(16)}}` : ch;
  }
  return out;
}
