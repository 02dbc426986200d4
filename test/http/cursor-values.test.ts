/**
 * What a page's next cursor says (nextCursor, paginate): `false`, like null and "", is no next
 * page — it was sent as `?cursor=false` — and an integer beyond 2^53, its last digits lost in
 * JSON parsing, fails the fetch before it is sent, naming the page, the path and the string form.
 * The interpolation of such a number into a request path is refused the same way.
 */
import { describe, expect, it } from 'vitest';
import { hasMore, nextCursor, paginate, PaginationError, type PaginationPlan } from '../../engine/http/pagination.js';
import type { QueryParams } from '../../engine/http/request-builder.js';
import { interpolatePath, lostDigits } from '../../engine/eval/path-template.js';
import { Scope } from '../../engine/eval/scope.js';

const plan: PaginationPlan = { strategy: 'cursor', param: 'cursor', pageSize: 2, cursorPath: 'next_cursor' };
const BIG = JSON.parse('1489467234237774933') as number;

describe('a next cursor', () => {
  it('false, null and "" end the walk; 0, strings and safe integers are cursors', () => {
    for (const end of [false, null, '']) {
      expect(nextCursor(plan, { next_cursor: end })).toBeUndefined();
      expect(hasMore(plan, { next_cursor: end }, [1, 2])).toBe(false);
    }
    expect(nextCursor(plan, { next_cursor: 0 })).toBe('0');
    expect(nextCursor(plan, { next_cursor: 'abc' })).toBe('abc');
    expect(nextCursor(plan, { next_cursor: Number.MAX_SAFE_INTEGER })).toBe('9007199254740991');
    expect(nextCursor(plan, { next_cursor: 1.5 })).toBe('1.5');
  });

  it('beyond 2^53 is refused, with its string form when the page has one', () => {
    expect(lostDigits(BIG)).toBe(true);
    expect(lostDigits(Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(lostDigits(2 ** 53)).toBe(true);
    expect(() => nextCursor(plan, { next_cursor: BIG })).toThrow(PaginationError);
    expect(() => nextCursor(plan, { next_cursor: BIG, next_cursor_str: '1489467234237774933' })).toThrow('cursor(cursor, 2, "next_cursor_str")');
  });

  it('paginate stops at next: false and refuses a lost-digit cursor before asking for the page', async () => {
    const pages: Record<string, unknown> = { '': { items: [1, 2], next_cursor: 'c2' }, c2: { items: [3], next_cursor: false } };
    const asked: string[] = [];
    const fetchPage = async (query: QueryParams) => {
      const cursor = query.find(([k]) => k === 'cursor')?.[1] ?? '';
      asked.push(cursor);
      return pages[cursor] ?? { items: [] };
    };
    const r = await paginate(plan, { fetchPage });
    expect(r.items).toEqual([1, 2, 3]);
    expect(asked).toEqual(['', 'c2']);

    pages['c2'] = { items: [3], next_cursor: BIG };
    asked.length = 0;
    await expect(paginate(plan, { fetchPage, describe: () => 'GET /f' })).rejects.toThrow(
      'page 2 (GET /f) names its next cursor at "next_cursor" as a number: 1489467234237774800 is an integer beyond 2^53 (9007199254740991)',
    );
    expect(asked).toEqual(['', 'c2']);
  });
});

describe('a request path', () => {
  it('refuses an integer beyond 2^53 and sends a safe one', () => {
    const scope = new Scope();
    scope.set('m', { id: BIG, id_str: '1489467234237774933', n: 42 });
    expect(() => interpolatePath('/messages/{m.id}/reactions', scope)).toThrow('fill it from the string the API sends beside it: {m.id_str}');
    expect(interpolatePath('/messages/{m.id_str}/reactions', scope)).toBe('/messages/1489467234237774933/reactions');
    expect(interpolatePath('/messages/{m.n}?after={m.n}', scope)).toBe('/messages/42?after=42');
    scope.set('big', BIG);
    expect(() => interpolatePath('/x?after={big}', scope)).toThrow('Path parameter {big} was not sent: 1489467234237774800 is an integer beyond 2^53');
  });
});
