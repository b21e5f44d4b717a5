import { describe, expect, it } from 'vitest';
import { parseDeepLinkSettings } from '@/lib/config/deep-links';
import type { SettingError } from '@/lib/config/setting-error';
import { parseSettings } from '@/lib/config/settings';
import { deepLinksFor, fillUrlTemplate, urlTemplateProblem } from '@/lib/domain/deep-links';

const parse = (env: Record<string, string>) => {
  const errors: SettingError[] = [];
  return { templates: parseDeepLinkSettings(env, errors), errors };
};

describe('log and trace URL templates', () => {
  it('fill every {id} with the id as one percent-encoded URL component', () => {
    expect(fillUrlTemplate('https://logs.example/search?q=receipt:{id}&also={id}', 'rcpt 1/2?&#%')).toBe(
      'https://logs.example/search?q=receipt:rcpt%201%2F2%3F%26%23%25&also=rcpt%201%2F2%3F%26%23%25',
    );
    expect(fillUrlTemplate('https://traces.example/execution/{id}', '42')).toBe('https://traces.example/execution/42');
  });

  it('accept an http or https URL holding {id}, and say what is wrong with anything else', () => {
    expect(urlTemplateProblem('https://grafana.example/explore?expr=%7Bexecution%3D%22{id}%22%7D')).toBeNull();
    expect(urlTemplateProblem('http://logs.internal:8080/{id}')).toBeNull();
    expect(urlTemplateProblem('https://logs.example/search')).toMatch(/no \{id\} placeholder/);
    expect(urlTemplateProblem('javascript:alert({id})')).toMatch(/http or https/);
    expect(urlTemplateProblem('ftp://logs.example/{id}')).toMatch(/http or https/);
    expect(urlTemplateProblem('logs.example/{id}')).toMatch(/not a URL/);
    expect(urlTemplateProblem('https://reader:secret@logs.example/{id}')).toMatch(/user name or password/);
  });

  it('are read per kind of id and destination, and a page gets only the links that are set', () => {
    const { templates, errors } = parse({
      KEEL_LOG_URL_TEMPLATE_EXECUTION: ' https://logs.example/?execution={id} ',
      KEEL_TRACE_URL_TEMPLATE_RECEIPT: 'https://traces.example/search?tag=receipt%3D{id}',
      KEEL_LOG_URL_TEMPLATE_RECEIPT: '',
    });
    expect(errors).toEqual([]);
    expect(templates).toEqual({
      execution: { logs: 'https://logs.example/?execution={id}' },
      receipt: { traces: 'https://traces.example/search?tag=receipt%3D{id}' },
    });
    expect(deepLinksFor(templates, 'execution', '7')).toEqual({
      logs: 'https://logs.example/?execution=7',
      traces: null,
    });
    expect(deepLinksFor(templates, 'receipt', 'a b')).toEqual({
      logs: null,
      traces: 'https://traces.example/search?tag=receipt%3Da%20b',
    });
    expect(deepLinksFor({}, 'receipt', 'x')).toEqual({ logs: null, traces: null });
  });

  it('stop the start with a message naming the variable, never repeating its value', () => {
    const { errors } = parse({
      KEEL_LOG_URL_TEMPLATE_EXECUTION: 'https://user:hunter2@logs.example/{id}',
      KEEL_TRACE_URL_TEMPLATE_RECEIPTS: 'https://traces.example/{id}',
      KEEL_TRACE_URL_TEMPLATE_EXECUTION: 'https://traces.example/',
    });
    expect(errors.map((e) => e.name).sort()).toEqual([
      'KEEL_LOG_URL_TEMPLATE_EXECUTION',
      'KEEL_TRACE_URL_TEMPLATE_EXECUTION',
      'KEEL_TRACE_URL_TEMPLATE_RECEIPTS',
    ]);
    expect(errors.find((e) => e.name === 'KEEL_TRACE_URL_TEMPLATE_RECEIPTS')?.message).toMatch(
      /names no kind of id: the kinds are KEEL_TRACE_URL_TEMPLATE_EXECUTION, KEEL_TRACE_URL_TEMPLATE_RECEIPT/,
    );
    expect(errors.map((e) => e.message).join('\n')).not.toContain('hunter2');

    const parsed = parseSettings({ KEEL_LOG_URL_TEMPLATE_RECEIPT: 'https://logs.example/search' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toEqual([
        { name: 'KEEL_LOG_URL_TEMPLATE_RECEIPT', message: expect.stringMatching(/has no \{id\} placeholder/) },
      ]);
    }
    const fine = parseSettings({ KEEL_TRACE_URL_TEMPLATE_EXECUTION: 'https://traces.example/{id}' });
    expect(fine.ok && fine.value.deepLinks).toEqual({ execution: { traces: 'https://traces.example/{id}' } });
  });
});
