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

  it('gives undefined, never a throw or an inherited member, for what is not there', () => {
    expect(getPath(page, 'data[2].id')).toBeUndefined();
    expect(getPath(page, 'data[-3].id')).toBeUndefined();
    expect(getPath({ data: [] }, 'data[-1].id')).toBeUndefined();
    expect(getPath(page, 'meta[0]')).toBeUndefined();
    expect(getPath(page, 'constructor')).toBeUndefined();
    expect(getPath(page, 'odd[name')).toBe(1);
  });
});
