import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  deref,
  loadOpenApi,
  mockFromSchema,
  OpenApiError,
  parseOpenApi,
  resolveOperation,
  validateAgainstSchema,
} from '../../engine/http/openapi.js';

const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
const missionFile = path.join(fixtures, 'mission.vague'); // need not exist: only its folder is used
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-oas-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('OpenAPI loading', () => {
  const spec = loadOpenApi('./pets.yaml', missionFile);

  it('resolves operationIds to method and path template, and the base URL from servers[0]', () => {
    expect(spec.baseUrl).toBe('http://fake.test/api');
    expect(resolveOperation(spec, 'listPets')).toMatchObject({ method: 'GET', pathTemplate: '/pets', pathParams: [] });
    expect(resolveOperation(spec, 'getPet')).toMatchObject({ method: 'GET', pathTemplate: '/pets/{petId}', pathParams: ['petId'] });
    expect(resolveOperation(spec, 'deletePet')).toMatchObject({ method: 'DELETE' });
  });

  it('an unknown operation suggests the closest one', () => {
    expect(() => resolveOperation(spec, 'getPets')).toThrow(/has no operation "getPets"; did you mean "getPet"\?/);
  });

  it('finds the 2xx JSON response schema, also through a $ref’d response', () => {
    const list = resolveOperation(spec, 'listPets').responseSchema!;
    expect(list['required']).toEqual(['pets', 'next']);
    const one = deref(spec, resolveOperation(spec, 'getPet').responseSchema)!;
    expect(one['required']).toEqual(['id', 'name']);
    expect(resolveOperation(spec, 'deletePet').responseSchema).toBeUndefined();
  });

  it('mocks deterministically from the schema (recursion bounded)', () => {
    const schema = resolveOperation(spec, 'listPets').responseSchema;
    const a = mockFromSchema(spec, schema);
    expect(a).toEqual(mockFromSchema(spec, schema));
    const page = a as { pets: Record<string, unknown>[]; next: unknown };
    expect(page.next).toBe('string');
    expect(page.pets[0]).toMatchObject({ id: 'string', name: 'string', tag: 'dog', born: '1970-01-01T00:00:00.000Z' });
    expect(JSON.stringify(a).length).toBeLessThan(10_000);
  });

  it('validates values against the schema and lists mismatches', () => {
    const schema = resolveOperation(spec, 'listPets').responseSchema;
    expect(validateAgainstSchema(spec, { pets: [{ id: 'a', name: 'Rex' }], next: null }, schema)).toEqual([]);
    expect(validateAgainstSchema(spec, { pets: [{ id: 1, tag: 'cow' }] }, schema)).toEqual([
      '$.next: required but missing',
      '$.pets[0].name: required but missing',
      '$.pets[0].id: expected string but got: number (1)',
      '$.pets[0].tag: expected one of "dog", "cat" but got: string ("cow")',
    ]);
    expect(validateAgainstSchema(spec, [], schema)).toEqual(['$: expected object but got: array (0)']);
  });

  it('loads the shared conformance pets.yaml when it exists', () => {
    const shared = '/work/main/assets/conformance/pets.yaml';
    if (!fs.existsSync(shared)) {
      // Written by another helper; our fixture above covers the same document until then.
      expect(fs.existsSync(path.join(fixtures, 'pets.yaml'))).toBe(true);
      return;
    }
    const s = loadOpenApi(shared, '/work/main/assets/conformance/mission.vague');
    expect(resolveOperation(s, 'listPets').method).toBe('GET');
    expect(resolveOperation(s, 'getPet').pathTemplate).toBe('/pets/{petId}');
    expect(s.baseUrl).toBe('http://fake.test/api');
  });
});

describe('OpenAPI safety and errors', () => {
  it('rejects external $refs without fetching anything', () => {
    const text = JSON.stringify({ openapi: '3.0.0', paths: { '/a': { get: { operationId: 'a', responses: { 200: { $ref: 'http://evil.test/x.json' } } } } } });
    expect(() => parseOpenApi(text, 'spec.json')).toThrow(/external \$ref "http:\/\/evil\.test\/x\.json"/);
    expect(() => parseOpenApi("openapi: 3.0.0\ncomponents:\n  schemas:\n    A: { $ref: './other.yaml#/A' }\n", 'spec.yaml')).toThrow(OpenApiError);
  });
  it('reports unreadable, invalid and non-3.x documents clearly', () => {
    expect(() => loadOpenApi('missing.yaml', path.join(tmp, 'm.vague'))).toThrow(/cannot read OpenAPI document .*missing\.yaml: ENOENT/);
    expect(() => parseOpenApi('a: [', 'x.yaml')).toThrow(/x\.yaml: not valid YAML/);
    expect(() => parseOpenApi('{"swagger":"2.0"}', 'x.json')).toThrow(/only OpenAPI 3\.x .*"2\.0"/);
  });
  it('resolves a path relative to the mission folder, and JSON documents', () => {
    fs.mkdirSync(path.join(tmp, 'specs'));
    fs.writeFileSync(
      path.join(tmp, 'specs', 'api.json'),
      JSON.stringify({ openapi: '3.1.0', servers: [{ url: '/v1' }], paths: { '/x': { post: { operationId: 'makeX' } } } }),
    );
    const s = loadOpenApi('specs/api.json', path.join(tmp, 'mission.vague'));
    expect(s.baseUrl).toBe('/v1');
    expect(resolveOperation(s, 'makeX')).toMatchObject({ method: 'POST', pathTemplate: '/x' });
  });
  it('rejects duplicate operationIds', () => {
    const text = JSON.stringify({ openapi: '3.0.0', paths: { '/a': { get: { operationId: 'x' } }, '/b': { get: { operationId: 'x' } } } });
    expect(() => parseOpenApi(text, 's.json')).toThrow(/operationId "x" is used twice/);
  });
});
