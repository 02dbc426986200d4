/**
 * Top-level declarations and mission items (reference §B): mission, action, schema, transform,
 * pipeline (`run`), checkpoint, trace, import and top-level `let`. Sources, stores and schedules
 * are in parser-resources.ts. A word is a keyword here only at the start of an item.
 */
import type {
  ActionDecl, ImportDecl, MissionDecl, Name, Pipeline, SchemaDecl, SchemaField, Stage, TopLevelItem,
  TopLevelLet, TransformDecl, TransformVariant, TypeRef,
} from './ast.js';
import { didYouMeanWord, listWords, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { enumValue } from './parser-options.js';
import { parseSchedule, parseSource, parseStoreDecl } from './parser-resources.js';
import { parseFieldBlock, parseStepBlock } from './parser-steps.js';

const TOP_LEVEL = ['mission', 'source', 'store', 'schema', 'transform', 'action', 'import', 'let'];
const TOP_LEVEL_WORDS: ReadonlySet<string> = new Set(TOP_LEVEL);
const MISSION_ITEMS = ['source', 'store', 'schema', 'transform', 'action', 'run', 'schedule', 'checkpoint', 'trace'];
const MISSION_ITEM_WORDS: ReadonlySet<string> = new Set(MISSION_ITEMS);

/** The whole file: declarations until end of file; a stray "}" is reported and skipped. */
export function parseTopLevel(p: Parser): TopLevelItem[] {
  const items: TopLevelItem[] = [];
  const last = p.tokens.length - 1;
  const isStart = (i: number): boolean => p.isWordAt(i, TOP_LEVEL_WORDS);
  while (!p.at('EOF')) {
    if (p.at('}') || p.at(',')) {
      const t = p.advance();
      if (t.kind === '}') p.error('E2002', t.span, 'Expected a declaration but found "}"', 'this "}" closes nothing: remove it');
      continue;
    }
    p.item(() => items.push(parseDeclaration(p)), last, isStart);
  }
  return items;
}

function parseDeclaration(p: Parser): TopLevelItem {
  const t = p.tok;
  if (t.kind === 'Word') {
    switch (t.text) {
      case 'mission': return parseMission(p);
      case 'source': return parseSource(p);
      case 'store': return parseStoreDecl(p);
      case 'schema': return parseSchema(p);
      case 'transform': return parseTransform(p);
      case 'action': return parseAction(p);
      case 'import': return parseImport(p);
      case 'let': return parseTopLevelLet(p);
    }
  }
  const help = (t.kind === 'Word' ? didYouMeanWord(t.text, TOP_LEVEL) : undefined) ?? `a file holds ${listWords(TOP_LEVEL)}`;
  return p.fail('E2002', 'a declaration', help);
}

function parseMission(p: Parser): MissionDecl {
  const start = p.advance().span.start;
  const name = p.expectName('a mission name');
  const m: MissionDecl = {
    kind: 'Mission', name, sources: [], stores: [], schemas: [], transforms: [], actions: [], pipelines: [],
    schedules: [], span: p.span(start),
  };
  p.parseBlock(
    `mission \`${name.name}\``,
    () => parseMissionItem(p, m),
    (i) => p.isWordAt(i, MISSION_ITEM_WORDS),
    (t) => {
      if (t.kind !== 'Word' || (t.text !== 'mission' && t.text !== 'import')) return false;
      p.error('E2001', t.span, `Expected "}" to close mission \`${name.name}\` but found "${t.text}"`, `add "}" before this \`${t.text}\``);
      return true;
    },
  );
  m.span = p.span(start);
  return m;
}

function parseMissionItem(p: Parser, m: MissionDecl): void {
  const t = p.tok;
  if (t.kind === 'Word') {
    switch (t.text) {
      case 'source': m.sources.push(parseSource(p)); return;
      case 'store': m.stores.push(parseStoreDecl(p)); return;
      case 'schema': m.schemas.push(parseSchema(p)); return;
      case 'transform': m.transforms.push(parseTransform(p)); return;
      case 'action': m.actions.push(parseAction(p)); return;
      case 'run': m.pipelines.push(parsePipeline(p)); return;
      case 'schedule': m.schedules.push(parseSchedule(p)); return;
      case 'checkpoint': {
        p.advance();
        p.expect(':', 'write `checkpoint: afterStep`');
        const mode = enumValue(p, ['afterStep', 'onFailure'] as const, 'a checkpoint mode');
        m.checkpoint = { mode: mode.value === 'afterStep' ? 'after-step' : 'on-failure', span: p.span(t.span.start) };
        return;
      }
      case 'trace': {
        p.advance();
        p.expect(':', 'write `trace: full`');
        const mode = enumValue(p, ['full', 'minimal'] as const, 'a trace mode');
        m.trace = { mode: mode.value, span: p.span(t.span.start) };
        return;
      }
    }
  }
  const help = (t.kind === 'Word' ? didYouMeanWord(t.text, MISSION_ITEMS) : undefined) ?? `a mission holds ${listWords(MISSION_ITEMS)}`;
  p.fail('E2003', 'a mission item', help);
}

function parseAction(p: Parser): ActionDecl {
  const start = p.advance().span.start;
  const name = p.expectName('an action name');
  const steps = parseStepBlock(p, `action \`${name.name}\``);
  return { kind: 'Action', name, steps, file: p.file, span: p.span(start) };
}

/** `run A then [B, C] then D if cond` */
function parsePipeline(p: Parser): Pipeline {
  const start = p.advance().span.start;
  const stages: Stage[] = [];
  do {
    const stageStart = p.tok.span.start;
    let stage: Stage;
    if (p.eat('[')) {
      const actions: Name[] = [p.expectName('an action name')];
      while (p.eat(',')) actions.push(p.expectName('an action name'));
      p.expect(']', 'parallel stage names are separated by commas: `[A, B]`');
      stage = { actions, parallel: true, span: p.span(stageStart) };
    } else {
      stage = { actions: [p.expectName('an action name or "[" after `run`')], parallel: false, span: p.span(stageStart) };
    }
    if (p.eatWord('if')) stage.condition = parseExpr(p);
    stage.span = p.span(stageStart);
    stages.push(stage);
  } while (p.eatWord('then'));
  return { kind: 'Pipeline', stages, span: p.span(start) };
}

function parseSchema(p: Parser): SchemaDecl {
  const start = p.advance().span.start;
  const name = p.expectName('a schema name');
  const fields = parseSchemaFields(p, `schema \`${name.name}\``);
  return { kind: 'Schema', name, fields, span: p.span(start) };
}

/** `{ name: Type, name?: Type, name: Type? … }` */
function parseSchemaFields(p: Parser, owner: string): SchemaField[] {
  const fields: SchemaField[] = [];
  p.parseBlock(
    owner,
    () => {
      const t = p.tok;
      if (t.kind !== 'Word' && t.kind !== 'String') p.fail('E2001', 'a field name or "}"');
      p.advance();
      let optional = p.eat('?');
      p.expect(':', `write \`${t.value}: string\``);
      const type = parseTypeRef(p);
      if (p.eat('?')) optional = true;
      fields.push({ name: { name: t.value, span: t.span }, type, optional, span: p.span(t.span.start) });
    },
    (i) => p.isKeyAt(i) || (p.tokens[i]!.kind === 'Word' && p.tokens[i + 1]?.kind === '?'),
  );
  return fields;
}

/** `name`, `name[]`, `[Type]`, `{ fields }` */
function parseTypeRef(p: Parser): TypeRef {
  const t = p.tok;
  p.enter();
  let type: TypeRef;
  if (t.kind === 'Word') {
    p.advance();
    type = { kind: 'NamedType', name: t.text, span: t.span };
  } else if (t.kind === '[') {
    p.advance();
    const element = parseTypeRef(p);
    p.expect(']');
    type = { kind: 'ArrayType', element, span: p.span(t.span.start) };
  } else if (t.kind === '{') {
    const fields = parseSchemaFields(p, 'the nested object type');
    type = { kind: 'ObjectType', fields, span: p.span(t.span.start) };
  } else {
    p.fail('E2001', 'a type (a name, `[Type]` or `{ … }`)');
  }
  while (p.at('[') && p.peek().kind === ']') {
    p.advance();
    p.advance();
    type = { kind: 'ArrayType', element: type, span: p.span(t.span.start) };
  }
  p.depth--;
  return type;
}

/**
 * `transform T: Source -> Target { … }`, `transform T -> Target { … }` or
 * `transform T { (Source) where guard -> Target { … }, … }` — all variants name one target.
 */
function parseTransform(p: Parser): TransformDecl {
  const start = p.advance().span.start;
  const name = p.expectName('a transform name');
  const variants: TransformVariant[] = [];
  if (p.at(':') || p.at('->')) {
    const variantStart = p.tok.span.start;
    let sourceSchema: Name | null = null;
    if (p.eat(':')) sourceSchema = p.expectName('a source schema name');
    p.expect('->', `write \`transform ${name.name}: Source -> Target { … }\``);
    const targetSchema = p.expectName('a target schema name');
    const fields = parseFieldBlock(p, `transform \`${name.name}\``);
    variants.push({ sourceSchema, targetSchema, fields, span: p.span(variantStart) });
  } else {
    p.parseBlock(
      `transform \`${name.name}\``,
      () => variants.push(parseVariant(p, name, variants[0]?.targetSchema)),
      (i) => p.tokens[i]!.kind === '(',
    );
  }
  return { kind: 'Transform', name, variants, span: p.span(start) };
}

function parseVariant(p: Parser, transform: Name, firstTarget: Name | undefined): TransformVariant {
  const start = p.expect('(', 'each variant starts with `(Schema)` or `(_)`').span.start;
  const source = p.expectName('a schema name or `_`');
  p.expect(')');
  const variant: TransformVariant = {
    sourceSchema: source.name === '_' ? null : source,
    targetSchema: source,
    fields: [],
    span: p.span(start),
  };
  if (p.eatWord('where')) variant.guard = parseExpr(p);
  p.expect('->', 'write `(Schema) -> Target { … }`');
  variant.targetSchema = p.expectName('a target schema name');
  if (firstTarget !== undefined && firstTarget.name !== variant.targetSchema.name) {
    p.error(
      'E2015',
      variant.targetSchema.span,
      `Every variant of transform \`${transform.name}\` must produce \`${firstTarget.name}\`, but this one produces \`${variant.targetSchema.name}\``,
      'split it into two transforms',
    );
  }
  variant.fields = parseFieldBlock(p, `the \`${transform.name}\` variant`);
  variant.span = p.span(start);
  return variant;
}

function parseImport(p: Parser): ImportDecl {
  const start = p.advance().span.start;
  const name = p.expectName('a name to import');
  p.expectWord('from', `write \`import ${name.name} from "./file.vague"\``);
  const from = p.expectString('a file path string');
  return { kind: 'Import', name, from, span: p.span(start) };
}

function parseTopLevelLet(p: Parser): TopLevelLet {
  const start = p.advance().span.start;
  const name = p.expectName('a variable name');
  p.expect('=', `write \`let ${name.name} = expression\``);
  const value = parseExpr(p);
  return { kind: 'TopLevelLet', name, value, span: p.span(start) };
}
