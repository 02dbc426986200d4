/**
 * The ten conformance missions of reqon-reference.md §H (assets/conformance/h1…h10.vague, copied
 * verbatim) parse with zero diagnostics into missions with the declared actions and pipeline.
 */
import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { MissionDecl } from '../../engine/lang/ast.js';
import { parseProgram } from '../../engine/lang/parser.js';

const dir = new URL('../../assets/conformance/', import.meta.url);

const expected: Record<number, { mission: string; actions: string[]; stages: string[][] }> = {
  1: { mission: 'Basics', actions: ['Load'], stages: [['Load']] },
  2: { mission: 'Paged', actions: ['Fetch'], stages: [['Fetch']] },
  3: { mission: 'Incremental', actions: ['SyncEvents', 'SyncPages'], stages: [['SyncEvents'], ['SyncPages']] },
  4: { mission: 'Dispatch', actions: ['Orders'], stages: [['Orders']] },
  5: {
    mission: 'Flow',
    actions: ['Poll', 'Check', 'Normal', 'Recover', 'NotifyA', 'NotifyB', 'Final'],
    stages: [['Poll'], ['Check'], ['Normal'], ['Recover'], ['NotifyA', 'NotifyB'], ['Final']],
  },
  6: { mission: 'Transforms', actions: ['Run'], stages: [['Run']] },
  7: { mission: 'Hooks', actions: ['Pay'], stages: [['Pay']] },
  8: { mission: 'Durable', actions: ['Backfill', 'Request'], stages: [['Backfill'], ['Request']] },
  9: { mission: 'Crud', actions: ['Create', 'Touch', 'Remove', 'Changes'], stages: [['Create'], ['Touch', 'Remove'], ['Changes']] },
  10: { mission: 'Pets', actions: ['List', 'Detail', 'Check', 'NeverRuns'], stages: [['List'], ['Detail'], ['Check'], ['NeverRuns']] },
};

describe('conformance missions (§H)', () => {
  for (let n = 1; n <= 10; n++) {
    it(`h${n}.vague parses with zero diagnostics`, () => {
      const file = `h${n}.vague`;
      const { program, diagnostics } = parseProgram(readFileSync(new URL(file, dir), 'utf8'), file);
      expect(diagnostics).toEqual([]);
      const mission = program.items.find((i): i is MissionDecl => i.kind === 'Mission');
      expect(mission?.name.name).toBe(expected[n]!.mission);
      expect(mission?.actions.map((a) => a.name.name)).toEqual(expected[n]!.actions);
      expect(mission?.pipelines.at(-1)?.stages.map((s) => s.actions.map((a) => a.name))).toEqual(expected[n]!.stages);
      expect(mission?.actions.every((a) => a.file === file)).toBe(true);
    });
  }

  it('h1 keeps its top-level import and let, and its escaped string', () => {
    const { program } = parseProgram(readFileSync(new URL('h1.vague', dir), 'utf8'), 'h1.vague');
    expect(program.items.map((i) => i.kind)).toEqual(['Import', 'TopLevelLet', 'Mission']);
    expect(readFileSync(new URL('h1.vague', dir), 'utf8')).toContain('quoted: "say \\"hi\\"",');
  });

  it('h5 parses the conditional last stage and h9 the schedule', () => {
    const h5 = parseProgram(readFileSync(new URL('h5.vague', dir), 'utf8'), 'h5.vague').program.items[0] as MissionDecl;
    expect(h5.pipelines[0]!.stages.at(-1)?.condition?.kind).toBe('Binary');
    const h9 = parseProgram(readFileSync(new URL('h9.vague', dir), 'utf8'), 'h9.vague').program.items[0] as MissionDecl;
    expect(h9.schedules[0]!.trigger).toMatchObject({ kind: 'every', amount: 6, unit: 'hours' });
  });

  it('h10 has its OpenAPI document next to it', () => {
    expect(existsSync(new URL('pets.yaml', dir))).toBe(true);
    const doc = parseYaml(readFileSync(new URL('pets.yaml', dir), 'utf8')) as {
      openapi: string;
      servers: { url: string }[];
      paths: Record<string, { get: { operationId: string } }>;
    };
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.servers[0]!.url).toBe('http://fake.test/api');
    expect(doc.paths['/pets']!.get.operationId).toBe('listPets');
    expect(doc.paths['/pets/{petId}']!.get.operationId).toBe('getPet');
  });
});
