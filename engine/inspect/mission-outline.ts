/**
 * What the inspector needs from a mission's text without parsing it fully: its declared stores
 * (name → kind), which file declares each action (folder missions spread actions over files), and
 * each `for` loop's variable and collection by the loop's line (a `for` step's `step.started`
 * logs that line), so State can show the item an iteration is processing.
 *
 * This reads declarations with patterns rather than the language front end because the inspector
 * must show logs written by older or newer mission versions, and because a half-edited file must
 * not hide a run's state. Comments are blanked first so a commented-out store does not show.
 */

export interface MissionOutline {
  storeKinds: Record<string, string>;
  actionFiles: Record<string, string>;
  entryFile: string;
  /** `file:line` of a `for` → its variable and, when the collection is a dotted name, its parts. */
  loops: Record<string, LoopOutline>;
}

export interface LoopOutline {
  variable: string;
  /** `response.items` → ['response', 'items']; null for any other expression (`a ++ b`, a call). */
  collection: string[] | null;
  /** `concurrency N` with N > 1 before its body: each iteration binds its own variables (and response). */
  concurrent?: boolean;
}

/** Where a loop's state is looked up: the file that holds it and the line `step.started` logged. */
export function loopKey(file: string, line: number): string {
  return `${file}:${line}`;
}

const STORE_DECL = /\bstore\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(memory|file|sql|nosql|postgrest)\s*\(/g;
const ACTION_DECL = /\baction\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{/g;
/** `for order in response.items {` / `… where` / `… concurrency`: the collection ends at one of these. */
const FOR_DECL = /\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+([^{\n]*?)\s*(?=\{|\bwhere\b|\bconcurrency\b|\bonError\b|$)/gm;
const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function outlineMission(files: { entry: string; files: { path: string; text: string }[] }): MissionOutline {
  const storeKinds: Record<string, string> = {};
  const actionFiles: Record<string, string> = {};
  const loops: Record<string, LoopOutline> = {};
  for (const file of files.files) {
    const text = blankComments(file.text);
    for (const match of text.matchAll(STORE_DECL)) storeKinds[match[1]!] = match[2]!;
    for (const match of text.matchAll(ACTION_DECL)) actionFiles[match[1]!] ??= file.path;
    for (const match of text.matchAll(FOR_DECL)) {
      const line = lineAt(text, match.index);
      const collection = match[2]!.trim();
      // Up to the body's `{`: `concurrency N` may stand on a line of its own.
      const body = text.indexOf('{', match.index);
      const concurrency = /\bconcurrency\s+([0-9]+)/.exec(text.slice(match.index, body === -1 ? undefined : body));
      loops[loopKey(file.path, line)] = {
        variable: match[1]!,
        collection: DOTTED.test(collection) ? collection.split('.') : null,
        ...(concurrency !== null && Number(concurrency[1]) > 1 ? { concurrent: true } : {}),
      };
    }
  }
  return { storeKinds, actionFiles, entryFile: files.entry, loops };
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** Replaces `// …` and `/* … *\/` comments (outside strings) with spaces, keeping offsets. */
export function blankComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') {
        out += ' ';
        i += 1;
      }
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      const end = close === -1 ? text.length : close + 2;
      out += text.slice(i, end).replace(/[^\n]/g, ' ');
      i = end;
    } else {
      out += c;
      i += 1;
    }
  }
  return out;
}

function stringEnd(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length && text[i] !== quote && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
  return Math.min(text.length, i + 1);
}
