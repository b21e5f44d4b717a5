import { describe, expect, it } from 'vitest';
import { checkNewUser } from '@/lib/domain/new-user-check';
import { createUserSchema } from '@/lib/domain/users';

// The create form checks with checkNewUser and the server action parses with createUserSchema:
// for every input the two must agree on what is wrong (each field's messages, in order) and on the cleaned fields.
const valid = { username: 'some.one', name: 'Some One', role: 'viewer', password: 'long-enough' };

const cases: [string, Record<string, string>][] = [
  ['a valid form', valid],
  ['a username with capitals and spaces around it', { ...valid, username: '  Some.One ' }],
  ['a username with a space inside', { ...valid, username: 'some one' }],
  ['a one-letter username', { ...valid, username: 'a' }],
  ['a 64-letter username', { ...valid, username: 'a'.repeat(64) }],
  ['a 65-letter username', { ...valid, username: 'a'.repeat(65) }],
  ['an empty username', { ...valid, username: '' }],
  ['a single sign-on username', { ...valid, username: 'sso.alice' }],
  ['a single sign-on username in capitals', { ...valid, username: ' SSO.Alice' }],
  ['a break-glass username', { ...valid, username: 'breakglass.me' }],
  ['a break-glass username that is also malformed', { ...valid, username: 'breakglass.m e' }],
  ['a username that only contains a reserved word', { ...valid, username: 'my.sso.breakglass.x' }],
  ['a username with NUL', { ...valid, username: 'some\u0000one' }],
  ['an empty name', { ...valid, name: '' }],
  ['a name of spaces', { ...valid, name: '   ' }],
  ['a name padded with spaces', { ...valid, name: '  Some One  ' }],
  ['a 200-character name', { ...valid, name: 'n'.repeat(200) }],
  ['a 201-character name', { ...valid, name: 'n'.repeat(201) }],
  ['a 200-character name with spaces around it', { ...valid, name: ` ${'n'.repeat(200)} ` }],
  ['a name with a control character', { ...valid, name: 'Some\u0007One' }],
  ['a name with a tab', { ...valid, name: 'Some\tOne' }],
  ['a name with a lone surrogate', { ...valid, name: 'Some\uD800One' }],
  ['a name with NUL that is too long', { ...valid, name: `\u0000${'n'.repeat(201)}` }],
  ['a name with a lone surrogate only', { ...valid, name: '\uDC00' }],
  ['an unknown role', { ...valid, role: 'root' }],
  ['an empty role', { ...valid, role: '' }],
  ['a 7-character password', { ...valid, password: 'seven77' }],
  ['an 8-character password', { ...valid, password: 'eight888' }],
  ['a 128-character password', { ...valid, password: 'p'.repeat(128) }],
  ['a 129-character password', { ...valid, password: 'p'.repeat(129) }],
  ['a password with spaces around it', { ...valid, password: '  spaced  ' }],
  ['a password of spaces', { ...valid, password: '        ' }],
  ['a password with a control character', { ...valid, password: 'long\u0001enough' }],
  ['a short password with NUL', { ...valid, password: '\u0000' }],
  ['an empty form', { username: '', name: '', role: '', password: '' }],
  ['everything wrong at once', { username: 'A B', name: '\u0000', role: 'x', password: 'short' }],
];

function schemaVerdict(input: Record<string, string>) {
  const parsed = createUserSchema.safeParse(input);
  if (parsed.success)
    return { ok: true, value: { username: parsed.data.username, name: parsed.data.name, role: parsed.data.role } };
  const errors: Record<string, string[]> = {};
  for (const issue of parsed.error.issues) (errors[issue.path.join('.')] ??= []).push(issue.message);
  return { ok: false, errors };
}

describe('the create-user form check', () => {
  it.each(cases)('agrees with the server action schema on %s', (_name, input) => {
    expect(checkNewUser(input)).toEqual(schemaVerdict(input));
  });
});
