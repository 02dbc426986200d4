import { describe, expect, it } from 'vitest';
import { getPath, nextCursor } from '../../engine/http/pagination.js';

describe('paths into a page (cursorPath, itemsPath, updateFrom)', () => {
  const page = { data: [{ id: 'a' }, { id: 'b', tags: [['x', 'y']] }], meta: { next: 'n1' }, 'odd[name': 1 };

  it('walks fields, indexes and indexes from the end', () => {
    expect(getPath(page, 'meta.next')).toBe('n1');
    expect(getPath(page, 'data.0.id')).toBe('a');
    expect(getPath(page, 'data[0].id')).toBe('a');
    expect(getPath(page, 'data[-1].id')).toBe('b');
    expect(getPath(page, 'data[-1].tags[0][-1]')).toBe('y');
    expect(getPath(page.data, '[1].id')).toBe('b');
    expect(nextCursor({ strategy: 'cursor', param: 'starting_after', pageSize: 2, cursorPath: 'data[-1].id' }, page)).toBe('b');
  });

  it('reads a field whose name holds a dot as one step (OData\'s @odata.nextLink; helper 73: the walk ended after page 1)', () => {
    const graph = { '@odata.context': 'x', value: [{ id: 1 }], '@odata.nextLink': 'https://graph/users?$skiptoken=p2', meta: { 'a.b': { c: 3 }, a: { b: { c: 4 } } } };
    expect(getPath(graph, '@odata.nextLink')).toBe('https://graph/users?$skiptoken=p2');
    expect(nextCursor({ strategy: 'cursor', param: '$skiptoken', cursorPath: '@odata.nextLink' }, graph)).toBe('https://graph/users?$skiptoken=p2');
    // The field named with the dot is the one meant where both readings exist; a nested path still reads as one.
    expect(getPath(graph, 'meta.a.b.c')).toBe(3);
    expect(getPath({ a: { b: 1 } }, 'a.b')).toBe(1);
    expect(getPath(graph, 'value[0].id')).toBe(1);
    // A dotted name that leads nowhere gives way to the nested reading (helper 74).
    expect(getPath({ 'a.b': {}, a: { b: { c: 4 } } }, 'a.b.c')).toBe(4);
  });

  it('gives undefined, never a throw or an inherited member, for what is not there', () => {
    expect(getPath(page, 'data[2].id')).toBeUndefined();
    expect(getPath(page, 'data[-3].id')).toBeUndefined();
    expect(getPath({ data: [] }, 'data[-1].id')).toBeUndefined();
    expect(getPath(page, 'meta[0]')).toBeUndefined();
    expect(getPath(page, 'constructor')).toBeUndefined();
    expect(getPath(page, 'odd[name')).toBe(1);
  });
});
