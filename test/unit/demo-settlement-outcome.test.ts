import { describe, expect, it } from 'vitest';
import { demoOutcome } from '@/lib/demo/runtime/settlement-workers';
import { DEFAULT_RETRY_POLICY, routeOutcome } from '@/lib/domain/settlement';

describe('demo settlement outcomes', () => {
  it('draws mostly accepted, some skipped, some retryable and a few permanent', () => {
    const kinds = Array.from({ length: 1_000 }, (_, i) => demoOutcome(0, i / 1_000).kind);
    const count = (kind: string) => kinds.filter((k) => k === kind).length;
    expect([count('Accepted'), count('Skipped'), count('Retryable'), count('Permanent')]).toEqual([800, 80, 100, 20]);
  });

  it('fails less on a retry, and every outcome routes', () => {
    const retries = Array.from({ length: 100 }, (_, i) => demoOutcome(2, i / 100));
    expect(retries.filter((o) => o.kind === 'Accepted')).toHaveLength(70);
    const routes = Array.from(
      { length: 1_000 },
      (_, i) => routeOutcome(0, demoOutcome(0, i / 1_000), DEFAULT_RETRY_POLICY, 1).ok,
    );
    expect(routes.every(Boolean)).toBe(true);
  });
});
