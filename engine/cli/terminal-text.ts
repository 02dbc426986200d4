/**
 * What the CLI prints carries data of the APIs a run talked to — a store key, an `abort`
 * message, a response snippet in an error. A control character in it (ESC, NUL, BEL, CR, the C1
 * range) reaching a terminal could move the cursor, rewrite what was printed before, retitle the
 * window or set the clipboard (OSC 52). On a terminal they are printed as `\u` escapes; newlines
 * and tabs, which the CLI's own lines are made of, stay. Pipes and files get the text as it is:
 * a script reading `reqon store` or NDJSON gets the data unchanged.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

export function terminalSafe(text: string): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
