/**
 * Top-level declarations and mission items (reference §B): mission, action, schema, transform,
 * pipeline (`run`), checkpoint, trace, import and top-level `let`. Sources, stores and schedules
 * are in parser-resources.ts. A word is a keyword here only at the start of an item.
 */
import type {
  ActionDecl, ImportDecl, MissionDecl, Name, Pipeline, Schedule, SchemaDecl, SchemaField, Stage, TopLevelItem,
  TopLevelLet, TransformDecl, TransformVariant, TypeRef,
} from './ast.js';
import { ABORT, didYouMeanWord, listWords, type BlockRules, type ItemRules, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { enumValue } from './parser-options.js';
import { parseSchedule, parseSource, parseStoreDecl, RETRY_ON_FAILURE_HELP, SCHEDULE_OPTION_KEYS } from './parser-resources.js';
import { fieldBlockRules, parseActionBody, parseFieldBlock } from './parser-steps.js';
import { spanOf } from './ast.js';

const TOP_LEVEL = ['mission', 'source', 'store', 'schema', 'transform', 'action', 'import', 'let'];
const TOP_LEVEL_WORDS: ReadonlySet<string> = new Set(TOP_LEVEL);
const MISSION_ITEMS = ['source', 'store', 'schema', 'transform', 'action', 'run', 'schedule', 'checkpoint', 'trace'];
const MISSION_ITEM_WORDS: ReadonlySet<string> = new Set(MISSION_ITEMS);

const DECLARATIONS: ItemRules<TopLevelItem[]> = {
  item: (p, items) => {
    items.push(parseDeclaration(p));
  },
  isItemStart: (p, i) => p.isWordAt(i, TOP_LEVEL_WORDS),
};

/** The whole file: declarations until end of file; a stray "}" is reported and skipped. */
export function parseTopLevel(p: Parser): TopLevelItem[] {
  const items: TopLevelItem[] = [];
  const last = p.last;
  while (!p.at('EOF')) {
    if (p.at('}') || p.at(',')) {
      const t = p.advance();
      if (p.kindAt(t) === '}') p.error('E2002', p.spanAt(t), 'Expected a declaration but found "}"', 'this "}" closes nothing: remove it');
      continue;
    }
    p.item(DECLARATIONS, items, last);
  }
  return items;
}

function parseDeclaration(p: Parser): TopLevelItem {
  const isWord = p.kind === 'Word';
  if (isWord) {
    switch (p.textAt(p.pos)) {
      case 'mission': return parseMission(p);
      case 'source': return parseSource(p);
      case 'store': return parseStoreDecl(p);
      case 'schema': return parseSchema(p);
      case 'transform': return parseTransform(p);
      case 'action': return parseAction(p);
      case 'import': return parseImport(p);
      case 'let': return parseTopLevelLet(p);
      case 'dataset':
        // Vague's data-generator declaration (upstream's mock-data file): named, not a bare "expected".
        p.error('E2002', p.spanAt(p.pos), '`dataset` is not supported: it is Vague\'s data-generator declaration, not a Reqon one', 'a file of `import`, `schema … from` and `dataset` is run by Vague (`npx vague FILE`), not by reqon; a mission fetches with `get "/path"` and writes with `store … -> name`');
        throw ABORT;
    }
  }
  const help = (isWord ? didYouMeanWord(p.textAt(p.pos), TOP_LEVEL) : undefined) ?? `a file holds ${listWords(TOP_LEVEL)}`;
  return p.fail('E2002', 'a declaration', help);
}

function parseMission(p: Parser): MissionDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('a mission name');
  const m: MissionDecl = {
    kind: 'Mission', name, sources: [], stores: [], schemas: [], transforms: [], actions: [], pipelines: [],
    schedules: [], start, end: p.endFrom(start),
  };
  p.parseBlock(MISSION_BLOCK, m);
  m.end = p.endFrom(start);
  return m;
}

const MISSION_BLOCK: BlockRules<MissionDecl> = {
  describe: (m) => `mission \`${m.name.name}\``,
  item: parseMissionItem,
  isItemStart: (p, i) => p.isWordAt(i, MISSION_ITEM_WORDS),
  leaveOn: (p, t, m) => {
    const text = p.textAt(t);
    if (text !== 'mission' && text !== 'import') return false;
    p.error('E2001', p.spanAt(t), `Expected "}" to close mission \`${m.name.name}\` but found "${text}"`, `add "}" before this \`${text}\``);
    return true;
  },
};

function parseMissionItem(p: Parser, m: MissionDecl): void {
  const t = p.pos;
  const isWord = p.kind === 'Word';
  if (isWord) {
    switch (p.textAt(t)) {
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
        m.checkpoint = { mode: mode.value === 'afterStep' ? 'after-step' : 'on-failure', start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
        return;
      }
      case 'trace': {
        p.advance();
        p.expect(':', 'write `trace: full`');
        const mode = enumValue(p, ['full', 'minimal'] as const, 'a trace mode');
        m.trace = { mode: mode.value, start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
        return;
      }
    }
  }
  const word = isWord ? p.textAt(t) : '';
  if (word === 'retryOnFailure') p.fail('E2003', 'a mission item', `\`retryOnFailure\` is not supported: ${RETRY_ON_FAILURE_HELP}`);
  if ((SCHEDULE_OPTION_KEYS as readonly string[]).includes(word)) {
    // Upstream's docs show `skipIfRunning: true` beside `schedule:`; here it is one of the schedule's options.
    p.fail('E2003', 'a mission item', `\`${word}\` is an option of \`schedule:\`: write \`schedule: ${scheduleTriggerText(m.schedules[m.schedules.length - 1], word)} { ${word}: … }\``);
  }
  const help = (isWord ? didYouMeanWord(word, MISSION_ITEMS) : undefined) ?? `a mission holds ${listWords(MISSION_ITEMS)}`;
  p.fail('E2003', 'a mission item', help);
}

function parseAction(p: Parser): ActionDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('an action name');
  const steps = parseActionBody(p, name);
  return { kind: 'Action', name, steps, file: p.file, start, end: p.endFrom(start) };
}

/** `run A then [B, C] then D if cond` */
function parsePipeline(p: Parser): Pipeline {
  const start = p.startAt(p.advance());
  const stages = p.mark();
  do {
    const stageStart = p.start;
    let stage: Stage;
    if (p.eat('[')) {
      const actions = p.mark();
      p.add(p.expectName('an action name'));
      while (p.eat(',')) p.add(p.expectName('an action name'));
      p.expect(']', 'parallel stage names are separated by commas: `[A, B]`');
      stage = { actions: p.take<Name>(actions), parallel: true, start: stageStart, end: p.endFrom(stageStart) };
    } else {
      stage = { actions: [p.expectName('an action name or "[" after `run`')], parallel: false, start: stageStart, end: p.endFrom(stageStart) };
    }
    if (p.eatWord('if')) stage.condition = parseExpr(p);
    stage.end = p.endFrom(stageStart);
    p.add(stage);
  } while (p.eatWord('then'));
  return { kind: 'Pipeline', stages: p.take<Stage>(stages), start, end: p.endFrom(start) };
}

function parseSchema(p: Parser): SchemaDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('a schema name');
  if (p.atWord('from')) {
    // Vague's `schema Product from ecommerce.Product {}` (upstream's mock-data file): a schema
    // taken from an imported OpenAPI document. Named, then read past, so the file's other
    // declarations are still checked.
    const from = p.advance();
    let end = p.endAt(from);
    if (p.kind === 'Word') end = p.endAt(p.advance());
    while (p.at('.') && p.peekKind() === 'Word') {
      p.advance();
      end = p.endAt(p.advance());
    }
    p.error(
      'E2001',
      { start: p.startAt(from), end },
      `\`schema ${name.name} from …\` is not supported: it is Vague's form (a schema taken from an imported document), not a Reqon one`,
      `declare the fields the mission needs: \`schema ${name.name} { id: string, … }\`; a file of \`import\`, \`schema … from\` and \`dataset\` is run by Vague (\`npx vague FILE\`)`,
    );
  }
  const fields = parseSchemaFields(p, `schema \`${name.name}\``);
  return { kind: 'Schema', name, fields, start, end: p.endFrom(start) };
}

/** `{ name: Type, name?: Type, name: Type? … }` */
function parseSchemaFields(p: Parser, owner: string): SchemaField[] {
  const fields = p.mark();
  p.parseBlock(SCHEMA_FIELDS, owner);
  return p.take(fields);
}

const SCHEMA_FIELDS: BlockRules<string> = {
  describe: (owner) => owner,
  item: (p) => {
    const t = p.pos;
    const kind = p.kind;
    if (kind !== 'Word' && kind !== 'String') p.fail('E2001', 'a field name or "}"');
    p.advance();
    let optional = p.eat('?');
    if (!p.eat(':')) p.expect(':', `write \`${p.valueAt(t)}: string\``); // help built on failure only
    const type = parseTypeRef(p);
    if (p.eat('?')) optional = true;
    const field: SchemaField = { name: { name: p.valueAt(t), start: p.startAt(t), end: p.endAt(t) }, type, optional, start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
    p.add(field);
  },
  isItemStart: (p, i) => p.isKeyAt(i) || (p.kindAt(i) === 'Word' && i < p.last && p.kindAt(i + 1) === '?'),
};

/** `name`, `name[]`, `[Type]`, `{ fields }` */
function parseTypeRef(p: Parser): TypeRef {
  const t = p.pos;
  const kind = p.kind;
  const start = p.startAt(t);
  p.enter();
  let type: TypeRef;
  if (kind === 'Word') {
    p.advance();
    type = { kind: 'NamedType', name: p.textAt(t), start: p.startAt(t), end: p.endAt(t) };
  } else if (kind === '[') {
    p.advance();
    const element = parseTypeRef(p);
    p.expect(']');
    type = { kind: 'ArrayType', element, start, end: p.endFrom(start) };
  } else if (kind === '{') {
    const fields = parseSchemaFields(p, 'the nested object type');
    type = { kind: 'ObjectType', fields, start, end: p.endFrom(start) };
  } else {
    p.fail('E2001', 'a type (a name, `[Type]` or `{ … }`)');
  }
  while (p.at('[') && p.peekKind() === ']') {
    p.advance();
    p.advance();
    type = { kind: 'ArrayType', element: type, start, end: p.endFrom(start) };
  }
  p.depth--;
  return type;
}

/**
 * `transform T: Source -> Target { … }`, `transform T -> Target { … }` or
 * `transform T { (Source) where guard -> Target { … }, … }` — all variants name one target.
 */
function parseTransform(p: Parser): TransformDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('a transform name');
  const variants: TransformVariant[] = [];
  if (p.at(':') || p.at('->')) {
    const variantStart = p.start;
    let sourceSchema: Name | null = null;
    if (p.eat(':')) sourceSchema = p.expectName('a source schema name');
    p.expect('->', `write \`transform ${name.name}: Source -> Target { … }\``);
    const targetSchema = p.expectName('a target schema name');
    const fields = parseFieldBlock(p, TRANSFORM_FIELDS, name);
    variants.push({ sourceSchema, targetSchema, fields, start: variantStart, end: p.endFrom(variantStart) });
  } else {
    p.parseBlock(VARIANTS, { name, variants });
  }
  return { kind: 'Transform', name, variants, start, end: p.endFrom(start) };
}

const TRANSFORM_FIELDS = fieldBlockRules((transform: Name) => `transform \`${transform.name}\``);
const VARIANT_FIELDS = fieldBlockRules((transform: Name) => `the \`${transform.name}\` variant`);

const VARIANTS: BlockRules<{ name: Name; variants: TransformVariant[] }> = {
  describe: ({ name }) => `transform \`${name.name}\``,
  item: (p, { name, variants }) => {
    variants.push(parseVariant(p, name, variants[0]?.targetSchema));
  },
  isItemStart: (p, i) => p.kindAt(i) === '(',
};

function parseVariant(p: Parser, transform: Name, firstTarget: Name | undefined): TransformVariant {
  const start = p.startAt(p.expect('(', 'each variant starts with `(Schema)` or `(_)`'));
  const source = p.expectName('a schema name or `_`');
  p.expect(')');
  const variant: TransformVariant = {
    sourceSchema: source.name === '_' ? null : source,
    targetSchema: source,
    fields: [],
    start, end: p.endFrom(start),
  };
  if (p.eatWord('where')) variant.guard = parseExpr(p);
  p.expect('->', 'write `(Schema) -> Target { … }`');
  variant.targetSchema = p.expectName('a target schema name');
  if (firstTarget !== undefined && firstTarget.name !== variant.targetSchema.name) {
    p.error(
      'E2015',
      spanOf(variant.targetSchema),
      `Every variant of transform \`${transform.name}\` must produce \`${firstTarget.name}\`, but this one produces \`${variant.targetSchema.name}\``,
      'split it into two transforms',
    );
  }
  variant.fields = parseFieldBlock(p, VARIANT_FIELDS, transform);
  variant.end = p.endFrom(start);
  return variant;
}

function parseImport(p: Parser): ImportDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('a name to import');
  p.expectWord('from', `write \`import ${name.name} from "./file.vague"\``);
  const from = p.expectString('a file path string');
  return { kind: 'Import', name, from, start, end: p.endFrom(start) };
}

function parseTopLevelLet(p: Parser): TopLevelLet {
  const start = p.startAt(p.advance());
  const name = p.expectName('a variable name');
  p.expect('=', `write \`let ${name.name} = expression\``);
  const value = parseExpr(p);
  return { kind: 'TopLevelLet', name, value, start, end: p.endFrom(start) };
}

/**
 * The mission's own schedule as written, for the help of an option written beside it: the user's
 * cron, not another trigger (a `timezone` suggested on `every 1 hour` was then E3068, unused).
 */
function scheduleTriggerText(schedule: Schedule | undefined, option: string): string {
  const trigger = schedule?.trigger;
  if (trigger?.kind === 'cron') return `cron ${JSON.stringify(trigger.expression.value)}`;
  if (trigger?.kind === 'at') return `at ${JSON.stringify(trigger.when.value)}`;
  if (trigger?.kind === 'every') return `every ${trigger.amount} ${trigger.amount === 1 ? trigger.unit.replace(/s$/, '') : trigger.unit}`;
  return option === 'timezone' ? 'cron "0 9 * * *"' : 'every 1 hour';
}
