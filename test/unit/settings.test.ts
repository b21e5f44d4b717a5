import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { processInstanceId } from '../../lib/cli/http-primary';
import { deriveAuthSecret, parseSettings } from '../../lib/config/settings';

const KEY = 'ab'.repeat(32);

describe('settings', () => {
  it('defaults to the embedded database in demo mode with the documented defaults', () => {
    const parsed = parseSettings({});
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value).toMatchObject({
      databaseUrl: undefined,
      port: 3000,
      demo: true,
      demoRuntime: true,
      demoPassword: 'keel-demo',
      staleThresholdMs: 900_000,
      maxClockSkewMs: 5_000,
      proposalTtlMs: 900_000,
      orchestrationLeaseMs: 300_000,
    });
  });

  it('refuses DATABASE_URL without a checkpoint key and says what to do', () => {
    const parsed = parseSettings({ DATABASE_URL: 'postgres://db/keel' });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toEqual([
      expect.objectContaining({
        name: 'KEEL_CHECKPOINT_KEY',
        message: expect.stringMatching(/DATABASE_URL is set but KEEL_CHECKPOINT_KEY is not/),
      }),
    ]);
  });

  it('is not in demo mode on an attached database unless asked', () => {
    const attached = parseSettings({ DATABASE_URL: 'postgres://db/keel', KEEL_CHECKPOINT_KEY: KEY });
    expect(attached.ok && attached.value.demo).toBe(false);
    const demo = parseSettings({ DATABASE_URL: 'postgres://db/keel', KEEL_CHECKPOINT_KEY: KEY, KEEL_DEMO: '1' });
    expect(demo.ok && demo.value.demo).toBe(true);
  });

  it('serves demo mode on loopback only, and every interface otherwise', () => {
    const demo = parseSettings({});
    expect(demo.ok && demo.value.host).toBe('127.0.0.1');
    const attached = parseSettings({ DATABASE_URL: 'postgres://db/keel', KEEL_CHECKPOINT_KEY: KEY });
    expect(attached.ok && attached.value.host).toBeUndefined();
    const chosen = parseSettings({
      DATABASE_URL: 'postgres://db/keel',
      KEEL_CHECKPOINT_KEY: KEY,
      KEEL_HOST: '10.0.0.5',
    });
    expect(chosen.ok && chosen.value.host).toBe('10.0.0.5');
    expect(parseSettings({ KEEL_HOST: '::1' }).ok).toBe(true);
  });

  it('refuses demo mode on another address with the published demo password', () => {
    const published = parseSettings({ KEEL_HOST: '0.0.0.0' });
    expect(published.ok).toBe(false);
    if (published.ok) return;
    expect(published.error).toEqual([
      expect.objectContaining({ name: 'KEEL_HOST', message: expect.stringMatching(/KEEL_DEMO_PASSWORD/) }),
    ]);
    expect(parseSettings({ KEEL_HOST: '0.0.0.0', KEEL_DEMO_PASSWORD: 'keel-demo' }).ok).toBe(false);
    const own = parseSettings({ KEEL_HOST: '0.0.0.0', KEEL_DEMO_PASSWORD: 'a-password-of-our-own' });
    expect(own.ok && own.value.host).toBe('0.0.0.0');
  });

  it.each([
    ['KEEL_HOST', 'http://example.com', /not an IP address or host name/],
    ['KEEL_HOST', 'host name', /not an IP address or host name/],
    ['KEEL_STALE_THRESHOLD_MS', '59999', /below 60000/],
    ['KEEL_STALE_THRESHOLD_MS', '86400001', /above 86400000/],
    ['KEEL_MAX_CLOCK_SKEW_MS', '99', /below 100/],
    ['KEEL_MAX_CLOCK_SKEW_MS', '60001', /above 60000/],
    ['KEEL_PROPOSAL_TTL_MS', 'soon', /not a whole number/],
    ['KEEL_ORCHESTRATION_LEASE_MS', '999', /below 1000/],
    ['PORT', '70000', /above 65535/],
    ['KEEL_DEMO_RUNTIME', 'maybe', /must be 0 or 1/],
    ['KEEL_CHECKPOINT_KEY', 'abcd', /at least 32 bytes/],
    ['KEEL_DEMO_PASSWORD', 'short', /8 to 128/],
  ])('refuses %s=%s naming the bound it breaks', (name, value, message) => {
    const parsed = parseSettings({ [name]: value });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.find((e) => e.name === name)?.message).toMatch(message);
  });

  it('accepts the bounds themselves', () => {
    const parsed = parseSettings({
      KEEL_STALE_THRESHOLD_MS: '60000',
      KEEL_MAX_CLOCK_SKEW_MS: '60000',
      KEEL_DEMO_RUNTIME: '0',
    });
    expect(parsed.ok && parsed.value.demoRuntime).toBe(false);
  });

  it('reports every refused setting of one start at once, fields and the rules between them alike', () => {
    const parsed = parseSettings({
      DATABASE_URL: 'postgres://db/keel',
      PORT: '0',
      KEEL_DEMO_RUNTIME: 'maybe',
      KEEL_WEBHOOK_URLS: 'ops=https://hooks.example/ops',
      KEEL_OIDC_ISSUER: 'https://idp.example',
      KEEL_TRACE_URL_TEMPLATE_JOB: 'https://traces.example/{id}',
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.map((e) => e.name).sort()).toEqual(
      [
        'PORT',
        'KEEL_DEMO_RUNTIME',
        'KEEL_CHECKPOINT_KEY',
        'KEEL_WEBHOOK_SECRET_OPS',
        'KEEL_OIDC_CLIENT_ID',
        'KEEL_OIDC_CLIENT_SECRET',
        'KEEL_OIDC_ROLE_MAP',
        'KEEL_TRACE_URL_TEMPLATE_JOB',
      ].sort(),
    );
    // The message names the variable; the start prints each on a line of its own.
    for (const { name, message } of parsed.error) expect(message).toContain(name);
  });

  it('derives a session secret from the checkpoint key that is not the key itself', () => {
    const parsed = parseSettings({ KEEL_CHECKPOINT_KEY: KEY });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.authSecret).toBe(deriveAuthSecret(Buffer.from(KEY, 'hex')));
    expect(parsed.value.authSecret).not.toContain(KEY);
    expect(parsed.value.authSecret).toHaveLength(64);
  });
});

describe('KEEL_TRUSTED_PROXIES', () => {
  it('accepts addresses and CIDR ranges, and refuses anything else by name', () => {
    const good = parseSettings({ KEEL_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.5,fd00::/8' });
    expect(good.ok && good.value.trustedProxies).toEqual(['10.0.0.0/8', '192.168.1.5', 'fd00::/8']);
    const bad = parseSettings({ KEEL_TRUSTED_PROXIES: '10.0.0.0/8,proxy.internal' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error.map((e) => e.message).join('\n')).toContain('proxy.internal');
  });
});

describe('several instances and a read replica', () => {
  const base = { DATABASE_URL: 'postgres://p@127.0.0.1/keel', KEEL_CHECKPOINT_KEY: 'ab'.repeat(32) };

  it('takes a replica URL, the lag it tolerates, an instance id and a worker lease', () => {
    const parsed = parseSettings({
      ...base,
      DATABASE_READ_URL: 'postgresql://p@replica:5432/keel',
      KEEL_READ_MAX_LAG_MS: '2000',
      KEEL_INSTANCE_ID: 'keel-b.eu-1',
      KEEL_WORKER_LEASE_MS: '5000',
    });
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        databaseReadUrl: 'postgresql://p@replica:5432/keel',
        readMaxLagMs: 2000,
        instanceId: 'keel-b.eu-1',
        workerLeaseMs: 5000,
      },
    });
  });

  it('defaults to no replica, 5 s of tolerated lag, host-and-pid as the instance and a 30 s lease', () => {
    const parsed = parseSettings(base);
    expect(parsed).toMatchObject({
      ok: true,
      value: { databaseReadUrl: undefined, readMaxLagMs: 5000, workerLeaseMs: 30_000 },
    });
    expect(parsed.ok && parsed.value.instanceId).toMatch(new RegExp(`-${process.pid}$`));
  });

  it('refuses a replica that is not a postgres URL or has no primary, and a malformed instance id', () => {
    const names = (env: Record<string, string>) => {
      const parsed = parseSettings(env);
      return parsed.ok ? [] : parsed.error.map((e) => e.name);
    };
    expect(names({ ...base, DATABASE_READ_URL: 'mysql://x/y' })).toEqual(['DATABASE_READ_URL']);
    expect(names({ DATABASE_READ_URL: 'postgres://x/y' })).toEqual(['DATABASE_READ_URL']);
    expect(names({ ...base, KEEL_INSTANCE_ID: 'a b' })).toEqual(['KEEL_INSTANCE_ID']);
    expect(names({ ...base, KEEL_INSTANCE_ID: 'x'.repeat(65) })).toEqual(['KEEL_INSTANCE_ID']);
    expect(names({ ...base, KEEL_WORKER_LEASE_MS: '999' })).toEqual(['KEEL_WORKER_LEASE_MS']);
    expect(names({ ...base, KEEL_READ_MAX_LAG_MS: '-1' })).toEqual(['KEEL_READ_MAX_LAG_MS']);
  });

  it('serves with one HTTP process unless told, up to 64, or one per core with auto', () => {
    const processes = (env: Record<string, string>) => {
      const parsed = parseSettings({ ...base, ...env });
      return parsed.ok ? parsed.value.httpProcesses : parsed.error.map((e) => e.message);
    };
    expect(processes({})).toBe(1);
    expect(processes({ KEEL_HTTP_PROCESSES: '4' })).toBe(4);
    expect(processes({ KEEL_HTTP_PROCESSES: 'auto' })).toBe(Math.min(64, availableParallelism()));
    expect(processes({ KEEL_HTTP_PROCESSES: '0' })).toEqual([
      'KEEL_HTTP_PROCESSES=0 is below 1 (1 to 64 processes, or auto for one per core)',
    ]);
    expect(processes({ KEEL_HTTP_PROCESSES: '65' })).toEqual([
      'KEEL_HTTP_PROCESSES=65 is above 64 (1 to 64 processes, or auto for one per core)',
    ]);
    expect(processes({ KEEL_HTTP_PROCESSES: 'two' })).toEqual([
      'KEEL_HTTP_PROCESSES=two is not a whole number (1 to 64 processes, or auto for one per core)',
    ]);
  });

  it('leaves room for the process number in a named instance served by several processes', () => {
    const ok = (env: Record<string, string>) => parseSettings({ ...base, ...env }).ok;
    expect(ok({ KEEL_HTTP_PROCESSES: '2', KEEL_INSTANCE_ID: 'x'.repeat(61) })).toBe(true);
    expect(ok({ KEEL_HTTP_PROCESSES: '2', KEEL_INSTANCE_ID: 'x'.repeat(62) })).toBe(false);
    expect(ok({ KEEL_HTTP_PROCESSES: '1', KEEL_INSTANCE_ID: 'x'.repeat(64) })).toBe(true);
    // Each process is handed its own name, <id>-<n>, which is at most 64 long.
    expect(
      ok({ KEEL_HTTP_PROCESSES: '64', KEEL_INSTANCE_ID: `${'x'.repeat(61)}-64`, KEEL_HTTP_PROCESS_INDEX: '63' }),
    ).toBe(true);
    expect(processInstanceId('keel-a', 0)).toBe('keel-a-1');
    expect(processInstanceId(undefined, 3)).toBeUndefined();
  });
});
