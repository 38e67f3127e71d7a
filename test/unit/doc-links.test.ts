/**
 * Every relative link in the project's Markdown files resolves: the file or folder it names
 * exists, and an anchor (`file.md#heading`, or `#heading` in the same file) names a heading of
 * that Markdown file, slugged as GitHub renders headings. Links inside fenced code blocks and
 * inline code are not links; absolute URLs are not checked (no network in unit tests).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Folders that hold no documentation of the project (dependencies, outputs, VCS state). */
const SKIP = new Set(['node_modules', '.git', 'dist', 'test-results']);

/** The Markdown files under `dir`, recursively, minus {@link SKIP}. */
function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

/** The text outside fenced code blocks; inline code spans blanked out unless `keepCode`. */
function prose(text: string, keepCode = false): string {
  let fenced = false;
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      lines.push('');
      continue;
    }
    lines.push(fenced ? '' : keepCode ? line.replace(/`/g, '') : line.replace(/`[^`]*`/g, '``'));
  }
  return lines.join('\n');
}

/**
 * The anchors GitHub gives a Markdown file's headings: lower case, punctuation other than `-` and
 * `_` dropped, spaces to `-`; a repeated slug gets `-1`, `-2`, … in order.
 */
export function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(text, true).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative link targets of a Markdown text (inline links and images; not URLs). */
export function relativeLinks(text: string): string[] {
  const targets: string[] = [];
  for (const m of prose(text).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
    targets.push(target);
  }
  return targets;
}

describe('relative links in Markdown files', () => {
  it('the slug rule matches GitHub on the shapes the docs use', () => {
    const anchors = headingAnchors(
      "# A\n## Leader election (operator)\n## A workflow closed behind the plan's back\n" +
        '### How the binaries are obtained (`scripts/stack/build.sh`)\n## Tests\n## Tests\n```\n# not a heading\n```\n',
    );
    assert.deepEqual(
      [...anchors],
      [
        'a',
        'leader-election-operator',
        'a-workflow-closed-behind-the-plans-back',
        'how-the-binaries-are-obtained-scriptsstackbuildsh',
        'tests',
        'tests-1',
      ],
    );
    assert.deepEqual(relativeLinks('[a](x.md#b) `[c](d.md)` [e](https://f) ![g](h.png "t")'), [
      'x.md#b',
      'h.png',
    ]);
  });

  const files = markdownFiles(ROOT);
  it('finds the README and the docs', () => {
    const names = files.map((f) => relative(ROOT, f));
    assert.ok(names.includes('README.md'), 'README.md');
    assert.ok(
      names.some((n) => n.startsWith('docs/')),
      'docs/*.md',
    );
  });

  for (const file of files) {
    const name = relative(ROOT, file);
    it(`${name}: every relative link resolves`, () => {
      const text = readFileSync(file, 'utf8');
      const broken: string[] = [];
      for (const link of relativeLinks(text)) {
        const [path = '', anchor] = link.split('#', 2);
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(target).isDirectory() || !target.endsWith('.md')) continue;
        if (!headingAnchors(readFileSync(target, 'utf8')).has(anchor.toLowerCase()))
          broken.push(`${link}: no heading with anchor #${anchor} in ${relative(ROOT, target)}`);
      }
      assert.deepEqual(broken, [], `broken links in ${name}`);
    });
  }
});
