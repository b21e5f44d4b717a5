import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sourceFingerprint } from '../../next.config';

describe('the source fingerprint that names a build (next.config.ts generateBuildId)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'keel-fingerprint-'));
    mkdirSync(join(root, 'app', 'page'), { recursive: true });
    writeFileSync(join(root, 'app', 'page', 'page.tsx'), 'export default function Page() { return null; }\n');
    writeFileSync(join(root, 'package-lock.json'), '{}\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stays the same when only modification times change (a checkout, a clone, a copy)', () => {
    const before = sourceFingerprint(root);
    utimesSync(join(root, 'app', 'page', 'page.tsx'), new Date(2001, 0, 1), new Date(2001, 0, 1));
    expect(sourceFingerprint(root)).toBe(before);
  });

  it('changes with the contents, the name or the presence of a build input', () => {
    const before = sourceFingerprint(root);
    writeFileSync(join(root, 'app', 'page', 'page.tsx'), 'export default function Page() { return 1; }\n');
    const edited = sourceFingerprint(root);
    expect(edited).not.toBe(before);
    writeFileSync(join(root, 'instrumentation.ts'), '');
    expect(sourceFingerprint(root)).not.toBe(edited);
    rmSync(join(root, 'instrumentation.ts'));
    expect(sourceFingerprint(root)).toBe(edited);
    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    expect(sourceFingerprint(root)).not.toBe(edited);
  });

  it('ignores what is not a build input', () => {
    const before = sourceFingerprint(root);
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'notes.md'), '# notes\n');
    writeFileSync(join(root, 'README.md'), '# Keel\n');
    expect(sourceFingerprint(root)).toBe(before);
  });

  it('is a build id without "ad" in it, which Next keeps out of asset paths', () => {
    for (let i = 0; i < 200; i += 1) {
      writeFileSync(join(root, 'package-lock.json'), `{"n":${i}}\n`);
      expect(sourceFingerprint(root)).toMatch(/^keel-[0-9g-m]{40}$/);
    }
  });
});
