import { describe, expect, it } from 'vitest';
import { sameOriginPath } from '../../lib/http/same-origin-path';

const OFF_SITE = [
  '/\\evil.example/',
  '/%5Cevil.example/'.replace('%5C', '\\'),
  '/\t/evil.example/',
  '/\r/evil.example/',
  '/\n/evil.example/',
  '/\u0000/evil.example',
  '//evil.example/',
  '///evil.example/',
  '/\\/evil.example/',
  '\\\\evil.example',
  '/.//evil.example/',
  '/./\\evil.example',
  'https://evil.example/',
  'http://keel.invalid@evil.example/',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  ' javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'evil.example',
  '',
  ' /executions',
];

describe('sameOriginPath', () => {
  it.each(OFF_SITE)('sends %j back to /', (payload) => {
    expect(sameOriginPath(payload)).toBe('/');
  });

  it('keeps a console path with its query and fragment', () => {
    expect(sameOriginPath('/executions?status=FAILED#top')).toBe('/executions?status=FAILED#top');
    expect(sameOriginPath('/settlements/dead-letters')).toBe('/settlements/dead-letters');
  });

  it('keeps encoded slashes encoded: they stay a path on this site', () => {
    expect(sameOriginPath('/%2F%2Fevil.example')).toBe('/%2F%2Fevil.example');
    expect(sameOriginPath('/%5Cevil.example/')).toBe('/%5Cevil.example/');
    expect(sameOriginPath('/%09/evil.example/')).toBe('/%09/evil.example/');
  });

  it('returns the normalized path, so what is checked is what is followed', () => {
    expect(sameOriginPath('/a/../executions')).toBe('/executions');
  });

  it('refuses what is not a string', () => {
    expect(sameOriginPath(undefined)).toBe('/');
    expect(sameOriginPath(null)).toBe('/');
  });

  it('checks against a real origin in the browser too', () => {
    expect(sameOriginPath('/executions', 'http://localhost:3000')).toBe('/executions');
    expect(sameOriginPath('/\\evil.example/', 'http://localhost:3000')).toBe('/');
    // Same origin spelled as //host: followed as the plain path it resolves to.
    expect(sameOriginPath('//localhost:3000/x', 'http://localhost:3000')).toBe('/x');
    expect(sameOriginPath('//localhost:3001/x', 'http://localhost:3000')).toBe('/');
  });
});
