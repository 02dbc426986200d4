import { describe, expect, it } from 'vitest';
import { stableStringifyEntries, topLevelKeys } from '../../engine/stores/stable-json.js';

describe('store file text in insertion order', () => {
  it('writes members in the order given, fields sorted, and reads that order back', () => {
    const entries: [string, unknown][] = [
      ['10', { b: 1, a: { d: 2, c: 'x\n"y"' } }],
      ['2', {}],
      ['__proto__', { p: true }],
      ['a"b', { list: [{ z: 1, y: 2 }] }],
      ['1', { s: '{"1": [}' }],
    ];
    const text = stableStringifyEntries(entries);
    expect(text).toBe(
      '{\n  "10": {\n    "a": {\n      "c": "x\\n\\"y\\"",\n      "d": 2\n    },\n    "b": 1\n  },\n  "2": {},\n  "__proto__": {\n    "p": true\n  },\n' +
        '  "a\\"b": {\n    "list": [\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "1": {\n    "s": "{\\"1\\": [}"\n  }\n}\n',
    );
    expect(topLevelKeys(text)).toEqual(['10', '2', '__proto__', 'a"b', '1']);
    expect(JSON.parse(text)).toEqual(Object.fromEntries(entries));
    expect(stableStringifyEntries([])).toBe('{}\n');
  });

  it('reads the order of a hand-written file: any spacing, escapes, nested keys ignored, a repeated name once', () => {
    expect(topLevelKeys('{"b":{"x":{"y":1}},"\\u0061":[{"q":"}"}],  "c" : 1 ,"b":{}}')).toEqual(['b', 'a', 'c']);
    expect(topLevelKeys('{}')).toEqual([]);
    expect(topLevelKeys(' {\n\t"z\\\\" : "v\\\\" }')).toEqual(['z\\']);
  });
});
