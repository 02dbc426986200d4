/**
 * The Reqon lexer: text → a TokenStream (token.ts), by char code, one pass, no regular expressions.
 *
 * Layout is insignificant (newlines are whitespace), only `//` comments exist, strings use double
 * quotes. Invariants: the lexer never throws and always advances; every mistake becomes one
 * diagnostic (E1xxx) and lexing continues with a token that lets the parser carry on as if the
 * author had written the obvious fix (a single-quoted string still yields a `String` token,
 * `100_000` still yields a `Number`), so one slip gives one error.
 *
 * The same pass interns words and matches brackets (the parser's recovery jumps over bracketed
 * groups), so the parser never re-scans the tokens and no per-token object is allocated.
 */
import { DiagnosticBag, type Diagnostic } from './diagnostics.js';
import { hashStep, KIND, TokenStream, WordTable, type Token } from './token.js';

/** Tokens as objects, for tools and tests; the parser reads the compact stream (`lexTokens`). */
export function tokenize(text: string, file: string): { tokens: Token[]; diagnostics: Diagnostic[] } {
  const bag = new DiagnosticBag(file);
  const stream = lexTokens(text, bag);
  const tokens: Token[] = [];
  for (let i = 0; i < stream.count; i++) tokens.push(stream.token(i));
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

const WORD = KIND.Word;
const NUMBER = KIND.Number;
const STRING = KIND.String;
const L_BRACE = KIND['{'];
const R_BRACE = KIND['}'];
const L_PAREN = KIND['('];
const R_PAREN = KIND[')'];
const L_BRACKET = KIND['['];
const R_BRACKET = KIND[']'];

/** Tokenizes `text`, reporting into `bag` (the parser shares the bag, so both report into one). */
export function lexTokens(text: string, bag: DiagnosticBag): TokenStream {
  const n = text.length;
  // About one token per five characters in real missions; the stream grows when that is wrong.
  const out = new TokenStream(text, (n >> 2) + 16);
  const table = new WordTable(out.words, text);
  let openers = new Int32Array(64); // indexes of the brackets not closed yet
  let depth = 0; // how many of `openers` are in use
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not content

  let kind = -1;
  let len = 1;

  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11) {
      i++;
      continue;
    }
    const start = i;
    if (c < 128 && CLASS[c] === WORD_START) {
      let h = c;
      i++;
      for (; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= 128 || CLASS[d] === 0) break;
        h = hashStep(h, d);
      }
      if (i < n && text.charCodeAt(i) >= 128 && codePointIn(CONTINUES_WORD, text, i)) {
        i = nonAsciiWord(text, start, out, bag, table);
        continue;
      }
      out.push(WORD, start, i, table.intern(start, i, h));
      continue;
    }
    if (isDigit(c)) {
      i = lexNumber(text, start, out, bag);
      continue;
    }
    switch (c) {
      case 34: // "
        i = lexString(text, start, out, bag);
        continue;
      case 123: // {
      case 40: // (
      case 91: // [
        if (depth === openers.length) {
          const grown = new Int32Array(depth * 2);
          grown.set(openers);
          openers = grown;
        }
        openers[depth++] = out.push(c === 123 ? L_BRACE : c === 40 ? L_PAREN : L_BRACKET, start, start + 1, -1);
        i++;
        continue;
      case 125: // }
      case 41: // )
      case 93: { // ]
        const closer = out.push(c === 125 ? R_BRACE : c === 41 ? R_PAREN : R_BRACKET, start, start + 1, 0);
        const want = c === 125 ? L_BRACE : c === 41 ? L_PAREN : L_BRACKET;
        // Pop to the nearest opener of the same kind; openers skipped over stay unmatched.
        for (let s = depth - 1; s >= 0; s--) {
          const open = openers[s]!;
          if (out.kinds[open] === want) {
            out.aux[open] = closer;
            depth = s;
            break;
          }
        }
        i++;
        continue;
      }
      case 44: kind = KIND[',']; len = 1; break;
      case 58: kind = KIND[':']; len = 1; break;
      case 43: kind = KIND['+']; len = 1; break;
      case 42: kind = KIND['*']; len = 1; break;
      case 37: kind = KIND['%']; len = 1; break;
      case 94: kind = KIND['^']; len = 1; break;
      case 124: // | and `||`, which stands for `or` after the error
        if (text.charCodeAt(i + 1) === 124) {
          bag.error('E1001', { start, end: start + 2 }, 'Unexpected characters "||"', 'use `or`');
          out.push(WORD, start, start + 2, table.internString('or'));
          i += 2;
        } else (kind = KIND['|']), (len = 1);
        break;
      case 63: // ? ??
        if (text.charCodeAt(i + 1) === 63) (kind = KIND['??']), (len = 2);
        else (kind = KIND['?']), (len = 1);
        break;
      case 46: // . .. ...
        if (text.charCodeAt(i + 1) === 46) {
          if (text.charCodeAt(i + 2) === 46) (kind = KIND['...']), (len = 3);
          else (kind = KIND['..']), (len = 2);
        } else (kind = KIND['.']), (len = 1);
        break;
      case 45: // - ->
        if (text.charCodeAt(i + 1) === 62) (kind = KIND['->']), (len = 2);
        else (kind = KIND['-']), (len = 1);
        break;
      case 61: { // = => ==
        const d = text.charCodeAt(i + 1);
        if (d === 62) (kind = KIND['=>']), (len = 2);
        else if (d === 61) (kind = KIND['==']), (len = 2);
        else (kind = KIND['=']), (len = 1);
        break;
      }
      case 60: // < <=
        if (text.charCodeAt(i + 1) === 61) (kind = KIND['<=']), (len = 2);
        else (kind = KIND['<']), (len = 1);
        break;
      case 62: // > >=
        if (text.charCodeAt(i + 1) === 61) (kind = KIND['>=']), (len = 2);
        else (kind = KIND['>']), (len = 1);
        break;
      case 33: // != (a bare ! is not an operator)
        if (text.charCodeAt(i + 1) === 61) (kind = KIND['!=']), (len = 2);
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
        } else (kind = KIND['/']), (len = 1);
        break;
      }
      case 39: // ' — lexed as a string so the parser carries on, but reported
        i = lexSingleQuoted(text, start, out, bag);
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
          out.push(WORD, start, start + 2, table.internString('and'));
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
        i = c >= 128 && codePointIn(STARTS_WORD, text, start) ? nonAsciiWord(text, start, out, bag, table) : unexpectedRun(text, start, bag);
        continue;
    }
    if (kind >= 0) {
      out.push(kind, start, start + len, 0);
      i = start + len;
      kind = -1;
    }
  }
  out.push(KIND.EOF, n, n, 0);
  if (BIDI_CONTROL.test(text)) warnBidiControls(text, bag);
  return out;
}

/**
 * Unicode's bidirectional controls: in a string or a comment they make a line display otherwise
 * than it lexes ("Trojan Source", CVE-2021-42574) — `"admin" // ‮ ⁦` hides code from a reviewer.
 */
export const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const BIDI_CONTROLS = new RegExp(BIDI_CONTROL.source, 'g');
const BIDI_NAMES: Record<number, string> = {
  0x061c: 'ARABIC LETTER MARK', 0x200e: 'LEFT-TO-RIGHT MARK', 0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING', 0x202b: 'RIGHT-TO-LEFT EMBEDDING', 0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE', 0x202e: 'RIGHT-TO-LEFT OVERRIDE', 0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE', 0x2068: 'FIRST STRONG ISOLATE', 0x2069: 'POP DIRECTIONAL ISOLATE',
};

/** E1007 (a warning: upstream accepts them) at each bidi control, the first 20 of a file. */
function warnBidiControls(text: string, bag: DiagnosticBag): void {
  let count = 0;
  for (const m of text.matchAll(BIDI_CONTROLS)) {
    if (++count > 20) break;
    const c = m[0].charCodeAt(0);
    const name = `U+${c.toString(16).toUpperCase().padStart(4, '0')} ${BIDI_NAMES[c] ?? 'BIDI CONTROL'}`;
    bag.error('E1007', { start: m.index, end: m.index + 1 }, `A bidirectional control character (${name}): the line displays otherwise than it runs`, `remove it, or write it as an escape in a string (\`"\\u${c.toString(16).padStart(4, '0')}"\`)`);
  }
}

/** 10^k for k ≤ 22: exactly representable, so `digits / 10^k` is correctly rounded (see below). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * The literal to write for `raw` (`2.5e-3`), its exponent applied to the digits as written: 0.0025.
 * An integer beyond 2^53 would be E1006, and a literal past 40 characters helps nobody: for those,
 * `parseNumber` of the text, which takes an exponent.
 */
function withoutExponent(raw: string, value: number): string {
  const [, whole, fraction = '', exponent] = /^(\d+)(?:\.(\d+))?[eE]([+-]?\d+)$/.exec(raw)!;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  const text =
    point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  const tidy = text.replace(/^0+(?=\d)/, '').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  return tidy.length > 40 || (Number.isInteger(value) && !Number.isSafeInteger(value)) ? `parseNumber("${raw}")` : tidy;
}

/** `digits` or `digits.digits`; letters, `_` or digits glued to a number make it malformed. */
function lexNumber(text: string, start: number, out: TokenStream, bag: DiagnosticBag): number {
  const n = text.length;
  let i = start + 1;
  // The digits' value is accumulated while scanning; with at most 15 significant digits it is an
  // exact integer, and dividing it by an exact power of ten gives the correctly rounded value —
  // what parseFloat returns — without slicing the text (Clinger's fast path). Longer numbers
  // fall back to parseFloat.
  let mantissa = text.charCodeAt(start) - 48;
  let digits = 1;
  while (i < n && isDigit(text.charCodeAt(i))) {
    mantissa = mantissa * 10 + (text.charCodeAt(i) - 48);
    digits++;
    i++;
  }
  let fraction = 0;
  if (text.charCodeAt(i) === 46 && isDigit(text.charCodeAt(i + 1))) {
    i++;
    while (i < n && isDigit(text.charCodeAt(i))) {
      mantissa = mantissa * 10 + (text.charCodeAt(i) - 48);
      digits++;
      fraction++;
      i++;
    }
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
    // `2e-3`: the sign and digits of an exponent are part of the same bad number, not a subtraction.
    if (/^\d+(\.\d+)?[eE]$/.test(text.slice(start, i)) && (text.charCodeAt(i) === 43 || text.charCodeAt(i) === 45) && isDigit(text.charCodeAt(i + 1))) {
      i += 2;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
    }
    const raw = text.slice(start, i);
    const span = { start, end: i };
    const stripped = raw.replace(/_/g, '');
    if (/^\d+(\.\d+)?[eE][+-]?\d+$/.test(raw)) {
      // The reference's literals take no exponent (§A.5); say so, with the literal to write.
      const value = Number(raw);
      bag.error(
        'E1003',
        span,
        `Invalid number "${raw}": a number literal takes no exponent`,
        Number.isFinite(value) ? `write \`${withoutExponent(raw, value)}\`` : 'it is beyond the largest number a mission holds (about 1.8e308)',
      );
      out.push(NUMBER, start, i, out.numbers.push(Number.isFinite(value) ? value : 0) - 1);
    } else if (raw.includes('_') && /^\d+(\.\d+)?$/.test(stripped)) {
      bag.error('E1003', span, `Invalid number "${raw}": digit separators "_" are not supported`, `write \`${stripped}\``);
      out.push(NUMBER, start, i, out.numbers.push(parseFloat(stripped)) - 1);
    } else {
      bag.error('E1003', span, `Invalid number "${raw}"`, 'a number is digits with an optional fraction (`12`, `0.5`); a name cannot start with a digit');
      out.push(NUMBER, start, i, out.numbers.push(parseFloat(text.slice(start, goodEnd))) - 1);
    }
    return i;
  }
  const value = digits <= 15 ? (fraction === 0 ? mantissa : mantissa / POW10[fraction]!) : parseFloat(text.slice(start, i));
  if (fraction === 0 && digits > 15 && !Number.isSafeInteger(value) && (!Number.isFinite(value) || BigInt(text.slice(start, i)) !== BigInt(value))) {
    // 12345678901234567890 runs as 12345678901234567000: an id written in the mission would change.
    const shown = text.slice(start, i).length > 40 ? `${text.slice(start, start + 20)}… (${digits} digits)` : text.slice(start, i);
    bag.error(
      'E1006',
      { start, end: i },
      `The integer ${shown} is beyond 2^53: as a number it would be ${Number.isFinite(value) ? BigInt(value) : 'Infinity'}`,
      `write it as a string (\`"${text.slice(start, i)}"\`), as APIs send such ids`,
    );
  }
  out.push(NUMBER, start, i, out.numbers.push(value) - 1);
  return i;
}

/**
 * A double-quoted string: `\n \t \\ \"` (reference §A.5) and JSON's `\r \b \f \/ \uXXXX`, plus
 * `\u{X…}` (a code point); any other escaped character stands for itself (`\{` is `{`). A `\u`
 * without its digits is E1005 — before, `\u00e9` silently became the text `u00e9`.
 */
function lexString(text: string, start: number, out: TokenStream, bag: DiagnosticBag): number {
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
        if (e === 117) {
          const [value, after] = unicodeEscape(text, i, bag);
          parts.push(value);
          i = after;
        } else {
          parts.push(e === 110 ? '\n' : e === 116 ? '\t' : e === 114 ? '\r' : e === 98 ? '\b' : e === 102 ? '\f' : text[i + 1]!);
          i += 2;
        }
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
    out.push(STRING, start, end, out.strings.push(text.slice(start + 1, end)) - 1);
    return end;
  }
  const end = i + 1;
  if (parts === undefined) {
    out.push(STRING, start, end, -1); // the value is the text between the quotes
  } else {
    parts.push(text.slice(segment, i));
    out.push(STRING, start, end, out.strings.push(parts.join('')) - 1);
  }
  return end;
}

/** `\uXXXX` or `\u{X…}` at `at` (the backslash): the text it stands for and the offset after it. */
function unicodeEscape(text: string, at: number, bag: DiagnosticBag): [string, number] {
  const four = /^[0-9a-fA-F]{4}/.exec(text.slice(at + 2, at + 6));
  if (four) return [String.fromCharCode(parseInt(four[0], 16)), at + 6];
  const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(text.slice(at + 2, at + 12));
  if (braced && parseInt(braced[1]!, 16) <= 0x10ffff) return [String.fromCodePoint(parseInt(braced[1]!, 16)), at + 2 + braced[0].length];
  const shown = braced ? braced[0] : (/^\{[^}"\n]*\}?/.exec(text.slice(at + 2))?.[0] ?? /^[0-9a-fA-F]{0,4}/.exec(text.slice(at + 2))![0]);
  bag.error(
    'E1005',
    { start: at, end: at + 2 + shown.length },
    braced ? `Invalid escape \`\\u${shown}\`: beyond the last code point (10FFFF)` : `Invalid escape \`\\u${shown}\`: expected four hex digits or a code point in braces`,
    'write a character as `\\u00e9` (four hex digits) or `\\u{1F600}`; for a backslash followed by u, write `\\\\u`',
  );
  return ['u' + shown, at + 2 + shown.length];
}

/** `'text'`: reported, then kept as a string (up to the closing quote on the same line). */
function lexSingleQuoted(text: string, start: number, out: TokenStream, bag: DiagnosticBag): number {
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
  out.push(STRING, start, end, out.strings.push(text.slice(start + 1, i)) - 1);
  return end;
}

/** A run of characters that start no token (random bytes, non-ASCII letters): one error for the run. */
/** A name beyond ASCII starts with a letter, mark or digit of any script, or an emoji (`store 😀: …`). */
const STARTS_WORD = /^[\p{L}\p{M}\p{Nd}\p{Extended_Pictographic}]/u;
/** Inside one, also what joins or decorates its letters: zero-width and format characters. */
const CONTINUES_WORD = /^[\p{L}\p{M}\p{Nd}\p{Cf}\p{Extended_Pictographic}\u{fe0f}]/u;

/** Whether the code point at `i` is of `chars`. */
function codePointIn(chars: RegExp, text: string, i: number): boolean {
  return chars.test(String.fromCodePoint(text.codePointAt(i)!));
}

/** How long a name a message shows whole. */
const SHOWN_NAME = 40;

/**
 * A name with letters beyond ASCII (`données`): one error naming the word, and the word kept
 * whole, so the parser goes on as the writer meant. Split at its first such letter, it gave a
 * cascade (`Expected ":" but found "es"`, an unknown store `donn`, a step expected).
 */
function nonAsciiWord(text: string, start: number, out: TokenStream, bag: DiagnosticBag, table: WordTable): number {
  const n = text.length;
  let i = start;
  let h = 0;
  let first = true;
  while (i < n) {
    const c = text.charCodeAt(i);
    const ascii = c < 128 && CLASS[c] !== 0 && (CLASS[c] === WORD_START || isDigit(c));
    if (!ascii && !(c >= 128 && codePointIn(CONTINUES_WORD, text, i))) break;
    const width = c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    for (let k = 0; k < width; k++) {
      h = first ? text.charCodeAt(i + k) : hashStep(h, text.charCodeAt(i + k));
      first = false;
    }
    i += width;
  }
  const word = text.slice(start, i);
  const shown = printable(word.length > SHOWN_NAME ? `${word.slice(0, SHOWN_NAME)}…` : word);
  const ascii = word.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z0-9_]/g, '_').slice(0, SHOWN_NAME);
  // A field's name (`response.größe`, `{ größe: g }`) is the API's, not one to change: it is read as a string.
  const field = text.charCodeAt(start - 1) === 46 /* . */ || (/[{,]\s*$/.test(text.slice(Math.max(0, start - 40), start)) && /^\s*:/.test(text.slice(i, i + 40)));
  bag.error(
    'E1001',
    { start, end: i },
    `The name \`${shown}\` has characters other than ASCII letters, digits and \`_\``,
    field
      ? `a field whose name has other characters is written as a string: \`response["${shown}"]\`, \`{ "${shown}": … }\``
      : `names and keywords are ASCII: write \`${/^[0-9]/.test(ascii) ? `_${ascii}` : ascii}\`; a field, a store's table or file and any string may hold other characters (\`x["${shown}"]\`, \`memory("${shown}")\`)`,
  );
  out.push(WORD, start, i, table.intern(start, i, h));
  return i;
}

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

/** `s` as a message shows it: control, format and invisible space characters escaped (`\u{200b}`). */
function printable(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const invisible = cp < 32 || cp === 127 || (cp >= 0xd800 && cp <= 0xdfff) || (cp > 127 && /^[\p{Cf}\p{Zs}\p{Zl}\p{Zp}]$/u.test(ch) && cp !== 0x20);
    out += invisible ? `\\u{${cp.toString(16)}}` : ch;
  }
  return out;
}
