import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseWebhookSettings } from '../../lib/config/webhooks';

/**
 * What holds docs/alerts.yml to the rest of Keel (promtool checks the rules' syntax and
 * behaviour, e2e/prometheus-alerts.spec.ts runs them in Prometheus): the dead-letter rule
 * and the dead_letters.rising webhook share their threshold and window, and every alert has
 * a runbook entry in docs/alerts.md.
 */

const rulesText = readFileSync('docs/alerts.yml', 'utf8');
const runbook = readFileSync('docs/alerts.md', 'utf8');

interface Rule {
  alert: string;
  text: string;
}

const rules: Rule[] = rulesText
  .split(/^\s+- alert: /m)
  .slice(1)
  .map((block) => ({ alert: block.split('\n')[0]!.trim(), text: block }));

describe('docs/alerts.yml', () => {
  it('holds every alert Keel documents', () => {
    expect(rules.length).toBeGreaterThanOrEqual(14);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('grows dead letters by the webhook rule: the threshold Keel runs with, over the default window', () => {
    const rule = rules.find((r) => r.alert === 'KeelDeadLettersGrowing')!;
    const ranges = [...rule.text.matchAll(/keel_settlement_dead_lettered_total\[(\d+)m\]/g)].map(
      (m) => Number(m[1]) * 60_000,
    );
    expect(ranges).toEqual([parseWebhookSettings({}, []).deadLetterWindowMs]);
    // Compared with the server's KEEL_DEAD_LETTER_ALERT_THRESHOLD, never a number written here.
    expect(rule.text).toMatch(
      />\s*ignoring \(reason\) group_left \(\)\s*max without \(instance\) \(keel_dead_letter_alert_threshold\)/,
    );
    // A counter of dead-letterings: a gauge of standing dead letters drops when they are replayed.
    expect(rule.text).not.toMatch(/keel_settlement_dead_letters\b/);
  });

  it('passes every alert through pending (a for: duration), with a severity and a runbook entry', () => {
    for (const rule of rules) {
      expect(rule.text, rule.alert).toMatch(/^\s+for: [1-9]\d*m$/m);
      expect(rule.text, rule.alert).toMatch(/^\s+severity: (page|ticket)$/m);
      expect(rule.text, rule.alert).toContain(`runbook_url: docs/alerts.md#${rule.alert.toLowerCase()}`);
      expect(runbook, rule.alert).toMatch(new RegExp(`^### ${rule.alert}$`, 'm'));
    }
    // And no runbook entry for an alert that is gone.
    const entries = [...runbook.matchAll(/^### (Keel\w+)$/gm)].map((m) => m[1]);
    expect(entries.sort()).toEqual(rules.map((r) => r.alert).sort());
  });

  it('pages only for what cannot wait: a proposal left to expire is safe, so it makes a ticket', () => {
    const pages = rules
      .filter((r) => /severity: page/.test(r.text))
      .map((r) => r.alert)
      .sort();
    expect(pages).toEqual(['KeelDown', 'KeelNotScraped', 'KeelSettlementQueueStalled']);
  });
});
