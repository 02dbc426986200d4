/**
 * Transpiles engine folders to plain ES modules in a temp dir, so that child processes (the crash
 * and concurrency tests SIGKILL real writers) can import engine code without a TS loader.
 * Relative imports already end in `.js` (NodeNext), so a per-file transpile keeps them working.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const repoRoot = path.resolve(new URL('../../..', import.meta.url).pathname);

/** Writes `<outDir>/engine/<folder>/*.js` for each folder and returns the path of `engine/`. */
export function compileEngineFolders(outDir: string, folders: string[]): string {
  fs.writeFileSync(path.join(outDir, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const folder of folders) {
    const from = path.join(repoRoot, 'engine', folder);
    const to = path.join(outDir, 'engine', folder);
    fs.mkdirSync(to, { recursive: true });
    for (const name of fs.readdirSync(from)) {
      if (!name.endsWith('.ts') || name.endsWith('.d.ts')) continue;
      const source = fs.readFileSync(path.join(from, name), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, isolatedModules: true },
        fileName: name,
      });
      fs.writeFileSync(path.join(to, name.replace(/\.ts$/, '.js')), outputText);
    }
  }
  return path.join(outDir, 'engine');
}
