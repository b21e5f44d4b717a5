import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  deadLetterActionSchema,
  requeueSchema,
  bulkPreviewSchema,
  bulkCancelSchema,
} from '../../app/actions/settlement-schemas';
import {
  cancelProposalSchema,
  confirmTakeoverSchema,
  proposeTakeoverSchema,
  rejectProposalSchema,
} from '../../app/actions/recovery-schemas';
import { auditFiltersSchema, auditListQuerySchema } from '../../lib/domain/audit-filters';
import { decodeCursor, encodeCursor } from '../../lib/domain/cursor';
import {
  cursorText,
  filterText,
  findUnstorableText,
  multiLineText,
  singleLineText,
  textProblem,
} from '../../lib/domain/text';
import { createUserSchema, disableUserSchema, userListQuerySchema } from '../../lib/domain/users';
import { parseInput } from '../../lib/server/parse-input';

const NUL = '\u0000';
const LONE_HIGH = '\uD800';
const LONE_LOW = '\uDC00';
const PAIR = '\uD83D\uDE00'; // an emoji: a well-formed surrogate pair

describe('textProblem', () => {
  it('accepts well-formed text, including surrogate pairs and non-Latin scripts', () => {
    for (const ok of ['', 'plain', `smile ${PAIR}`, 'नमस्ते', 'Ünïcödé', 'a\u00A0b']) {
      expect(textProblem(ok)).toBeNull();
    }
  });
  it('finds lone surrogates, high or low, anywhere', () => {
    for (const bad of [LONE_HIGH, `a${LONE_HIGH}`, `${LONE_LOW}a`, `a${LONE_LOW}${LONE_HIGH}b`, `${PAIR}${LONE_HIGH}`])
      expect(textProblem(bad)).toBe('LONE_SURROGATE');
  });
  it('refuses NUL and other C0 controls and DEL on one line', () => {
    for (const bad of [NUL, `a${NUL}b`, '\u0001', 'a\nb', 'a\tb', '\r', '\u001F', '\u007F'])
      expect(textProblem(bad)).toBe('CONTROL_CHARACTER');
  });
  it('lets a multi-line note keep tab, line feed and carriage return, never NUL', () => {
    expect(textProblem('line 1\r\nline 2\tend', { multiline: true })).toBeNull();
    for (const bad of [NUL, '\u0007', '\u000B', '\u000C', '\u001B[31m', '\u007F'])
      expect(textProblem(bad, { multiline: true })).toBe('CONTROL_CHARACTER');
  });
});

describe('text schemas', () => {
  it('bound the length after trimming, and keep free-text ids untrimmed', () => {
    expect(singleLineText(5).safeParse('  abcde  ').success).toBe(true);
    expect(singleLineText(5).safeParse('abcdef').success).toBe(false);
    expect(singleLineText(10, { trim: false }).parse(' id ')).toBe(' id ');
    expect(singleLineText(10, { min: 1 }).safeParse('   ').success).toBe(false);
  });
  it('refuse NUL, lone surrogates and controls with a message that does not echo the value', () => {
    for (const schema of [singleLineText(100), multiLineText(100), filterText(100)]) {
      for (const bad of [`QQ${NUL}`, `QQ${LONE_HIGH}`, `QQ${LONE_LOW}`, 'QQ\u0001']) {
        const parsed = schema.safeParse(bad);
        expect(parsed.success).toBe(false);
        expect(JSON.stringify(parsed.error?.issues.map((i) => i.message))).not.toContain('QQ');
      }
    }
  });
  it('filterText maps an emptied field to "any"', () => {
    expect(filterText(10).parse('')).toBeUndefined();
    expect(filterText(10).parse(' a ')).toBe('a');
  });
  it('cursorText accepts only printable ASCII', () => {
    expect(cursorText(400).safeParse(encodeCursor(['a', 1])).success).toBe(true);
    for (const bad of [`a${NUL}`, 'a b', `a${LONE_HIGH}`, 'é'])
      expect(cursorText(400).safeParse(bad).success).toBe(false);
  });
  it('a forged cursor whose JSON holds NUL decodes to nothing', () => {
    expect(decodeCursor(encodeCursor(['ok', 1]), 2)).toEqual(['ok', 1]);
    expect(decodeCursor(encodeCursor([`a${NUL}`, 1]), 2)).toBeNull();
    expect(decodeCursor(Buffer.from(`["\\ud800",1]`).toString('base64url'), 2)).toBeNull();
  });
});

describe('every action schema refuses NUL and lone surrogates in its text fields', () => {
  const operationId = 'op-1';
  const cases: [string, z.ZodType, Record<string, unknown>, string[]][] = [
    [
      'settlement dead letter',
      deadLetterActionSchema,
      { receiptId: 'r-1', note: 'why', operationId },
      ['receiptId', 'note'],
    ],
    [
      'settlement requeue',
      requeueSchema,
      { receiptId: 'r-1', expectedRowVersion: 1, operationId, note: 'why' },
      ['receiptId', 'note'],
    ],
    ['bulk preview', bulkPreviewSchema, { filters: { q: 'r-' }, note: 'why' }, ['note']],
    ['bulk cancel', bulkCancelSchema, { jobId: 1, note: 'why' }, ['note']],
    ['propose batch', proposeTakeoverSchema, { target: 'batch', executionId: 1, reason: 'why' }, ['reason']],
    [
      'propose orchestration',
      proposeTakeoverSchema,
      { target: 'orchestration', executionId: 'o-1', successorOwner: 'w1', reason: 'why' },
      ['executionId', 'reason', 'successorOwner'],
    ],
    [
      'confirm',
      confirmTakeoverSchema,
      { proposalId: 1, evidenceDigest: 'a'.repeat(64), reason: 'why' },
      ['reason', 'evidenceDigest'],
    ],
    ['reject', rejectProposalSchema, { proposalId: 1, reason: 'why' }, ['reason']],
    ['cancel', cancelProposalSchema, { proposalId: 1, reason: 'why' }, ['reason']],
    [
      'create user',
      createUserSchema,
      { username: 'someone', name: 'Some One', role: 'viewer', password: 'long-enough' },
      ['username', 'name', 'password'],
    ],
    ['disable user', disableUserSchema, { username: 'someone', reason: 'why' }, ['username', 'reason']],
  ];
  for (const [name, schema, valid, fields] of cases) {
    it(name, () => {
      expect(schema.safeParse(valid).success).toBe(true);
      for (const field of fields) {
        for (const bad of [`a${NUL}b`, `a${LONE_HIGH}b`]) {
          const input = field === 'q' ? valid : { ...valid, [field]: bad };
          expect(schema.safeParse(input).success, `${field} with ${JSON.stringify(bad)}`).toBe(false);
        }
      }
    });
  }
  it('the bulk preview filter q too', () => {
    expect(bulkPreviewSchema.safeParse({ filters: { q: `r${NUL}` }, note: 'why' }).success).toBe(false);
  });
});

describe('query schemas', () => {
  it('refuse NUL and lone surrogates in every audit filter and users query', () => {
    for (const key of ['actor', 'action', 'targetKind']) {
      expect(auditFiltersSchema.safeParse({ [key]: `a${NUL}` }).success).toBe(false);
      expect(auditListQuerySchema.safeParse({ [key]: `a${LONE_LOW}` }).success).toBe(false);
    }
    expect(auditListQuerySchema.safeParse({ cursor: `a${NUL}` }).success).toBe(false);
    expect(userListQuerySchema.safeParse({ cursor: `a${NUL}` }).success).toBe(false);
  });
});

describe('parseInput, the backstop of action() and apiRoute()', () => {
  const loose = z.object({ anything: z.string() }).passthrough();
  it('refuses NUL or a lone surrogate in any string, even where the schema would allow it', () => {
    const result = parseInput(loose, { anything: 'ok', nested: { deep: [`x${NUL}`] } });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(Object.keys(result.error.fieldErrors)).toEqual(['nested.deep.0']);
      expect(result.error.auditReason).toBe('Invalid input: nested.deep.0.');
    }
    expect(findUnstorableText({ a: `b${LONE_HIGH}` })).toEqual(['a']);
    expect(findUnstorableText({ a: `b${PAIR}`, n: 1 })).toBeNull();
  });
  it('names a field it cannot print safely as "?" and never the value', () => {
    const result = parseInput(loose, { anything: 'ok', [`k${NUL}ey`]: `v${NUL}` });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(Object.keys(result.error.fieldErrors)).toEqual(['?']);
      expect(result.error.auditReason).not.toContain(NUL);
    }
  });
  it('passes valid input through the schema', () => {
    expect(parseInput(z.object({ n: z.coerce.number() }), { n: '3' })).toEqual({ ok: true, value: { n: 3 } });
  });
});
