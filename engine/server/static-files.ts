/**
 * Static files of the renderer's browser build (renderer/dist), served read-only.
 *
 * Invariant: only regular files inside the root are ever opened — the URL path is decoded once,
 * resolved against the root and rejected when it lands outside it (`..`, encoded `%2e%2e`,
 * backslashes, NUL), or when it is a directory or a symlink pointing out.
 */
import fs from 'node:fs';
import path from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export interface StaticFile {
  file: string;
  contentType: string;
  body: Buffer;
}

/** The file for a URL path, or null (missing, outside the root, or not a regular file). */
export function resolveStatic(root: string, urlPath: string): StaticFile | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const relative = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
  if (relative.split('/').some((part) => part === '..')) return null;
  const realRoot = safeRealpath(root);
  if (realRoot === null) return null;
  const candidate = path.resolve(realRoot, relative);
  if (!isInside(realRoot, candidate)) return null;
  const real = safeRealpath(candidate);
  if (real === null || !isInside(realRoot, real)) return null;
  const stat = fs.statSync(real);
  if (!stat.isFile()) return null;
  return { file: real, contentType: contentTypeOf(real), body: fs.readFileSync(real) };
}

function isInside(root: string, file: string): boolean {
  const rel = path.relative(root, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function safeRealpath(file: string): string | null {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}
