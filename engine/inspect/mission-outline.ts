/**
 * What the inspector needs from a mission's text without parsing it fully: its declared stores
 * (name → kind) and which file declares each action (folder missions spread actions over files).
 *
 * This reads declarations with patterns rather than the language front end because the inspector
 * must show logs written by older or newer mission versions, and because a half-edited file must
 * not hide a run's state. Comments are blanked first so a commented-out store does not show.
 */

export interface MissionOutline {
  storeKinds: Record<string, string>;
  actionFiles: Record<string, string>;
  entryFile: string;
}

const STORE_DECL = /\bstore\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(memory|file|sql|nosql|postgrest)\s*\(/g;
const ACTION_DECL = /\baction\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{/g;

export function outlineMission(files: { entry: string; files: { path: string; text: string }[] }): MissionOutline {
  const storeKinds: Record<string, string> = {};
  const actionFiles: Record<string, string> = {};
  for (const file of files.files) {
    const text = blankComments(file.text);
    for (const match of text.matchAll(STORE_DECL)) storeKinds[match[1]!] = match[2]!;
    for (const match of text.matchAll(ACTION_DECL)) actionFiles[match[1]!] ??= file.path;
  }
  return { storeKinds, actionFiles, entryFile: files.entry };
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
