/** The workflow bundler's child process runs without the worker's heap limits. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import { slimBundle, withoutHeapLimits } from '../../src/worker/bundle.js';

describe('withoutHeapLimits', () => {
  it('drops --max-old-space-size and --max-semi-space-size in both spellings, keeps the rest', () => {
    assert.equal(
      withoutHeapLimits(
        '--max-old-space-size=128 --enable-source-maps --max-semi-space-size 4 --trace-warnings',
      ),
      '--enable-source-maps --trace-warnings',
    );
  });
  it('gives an empty string for no options', () => {
    assert.equal(withoutHeapLimits(undefined), '');
    assert.equal(withoutHeapLimits('  '), '');
    assert.equal(withoutHeapLimits('--max-old-space-size=96'), '');
  });
});

/** A bundle as the SDK's bundler writes it: code, then the inline base64 source map. */
function bundleOf(code: string, map: Record<string, unknown>): string {
  return `${code}\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

/** The source map of a bundle, decoded the way the SDK's worker does. */
function mapOf(bundle: string): Record<string, unknown> {
  const at = bundle.lastIndexOf('//# sourceMappingURL=data:');
  const b64 = bundle.indexOf('base64,', at) + 'base64,'.length;
  return JSON.parse(Buffer.from(bundle.slice(b64).trimEnd(), 'base64').toString()) as Record<string, unknown>;
}

describe('slimBundle', () => {
  const map = {
    version: 3,
    file: 'workflow-bundle.js',
    sources: ['webpack://a.ts', 'webpack://b.ts'],
    sourcesContent: ['export const a = 1; // → big', 'export const b = 2;'],
    names: ['a', 'b'],
    mappings: 'AAAA;AACA',
  };

  it('drops sourcesContent from the inline source map and keeps everything the stack traces use', () => {
    const out = slimBundle(bundleOf('var x = 1;', map));
    const { sourcesContent, ...rest } = map;
    assert.equal(sourcesContent.length, 2);
    assert.deepEqual(mapOf(out), rest);
    assert.ok(out.startsWith('var x = 1;\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,'));
  });

  it('escapes characters above Latin-1 so the code means the same', () => {
    const code = [
      '// a comment — with → arrows',
      'const s = "a—b→c✖";',
      'const t = `✖ ${s} …`;',
      'const r = /[—–]/.test("x–y");',
      'const é = "Latin-1 stays: é × ü";',
      'const astral = "😀";',
      'globalThis.__out = [s, t, r, é, astral];',
    ].join('\n');
    const out = slimBundle(bundleOf(code, map));
    const body = out.slice(0, out.lastIndexOf('//# sourceMappingURL='));
    assert.ok(![...body].some((c) => c.charCodeAt(0) > 0xff && c.codePointAt(0)! < 0x10000), body);
    assert.ok(body.includes('\\u2014') && body.includes('é × ü') && body.includes('😀'));
    const run = (src: string) => {
      const ctx: { __out?: unknown } = {};
      vm.runInNewContext(src, ctx);
      return JSON.stringify(ctx.__out); // the array is of the other realm
    };
    assert.equal(run(body), run(code));
    assert.equal(run(body), JSON.stringify(['a—b→c✖', '✖ a—b→c✖ …', true, 'Latin-1 stays: é × ü', '😀']));
  });

  it('leaves U+2028 and U+2029 alone: escaped inside a // comment they would no longer end it', () => {
    const code = '// comment\u2028globalThis.__out = 1;';
    const out = slimBundle(bundleOf(code, map));
    assert.ok(out.startsWith(code));
  });

  it('only escapes a bundle without an inline base64 source map', () => {
    assert.equal(slimBundle('const s = "—";'), 'const s = "\\u2014";');
    assert.equal(slimBundle('var x; //# sourceMappingURL=x.js.map'), 'var x; //# sourceMappingURL=x.js.map');
  });
});
