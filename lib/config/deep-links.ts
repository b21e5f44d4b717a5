import {
  DEEP_LINK_KINDS,
  urlTemplateProblem,
  type DeepLinkDestination,
  type DeepLinkTemplates,
} from '../domain/deep-links';
import type { SettingError } from './setting-error';

type Env = Record<string, string | undefined>;

/** The settings' prefix for each destination; the kind follows in capitals (`KEEL_LOG_URL_TEMPLATE_RECEIPT`). */
export const DEEP_LINK_PREFIXES: Record<DeepLinkDestination, string> = {
  logs: 'KEEL_LOG_URL_TEMPLATE_',
  traces: 'KEEL_TRACE_URL_TEMPLATE_',
};

const KIND_SUFFIXES = DEEP_LINK_KINDS.map((kind) => kind.toUpperCase());

/**
 * `KEEL_LOG_URL_TEMPLATE_<KIND>` and `KEEL_TRACE_URL_TEMPLATE_<KIND>` (docs/configuration.md#logs-and-traces):
 * an http(s) URL holding `{id}`, per kind of id. A bad template, or a setting under either prefix
 * that names no kind (a typo), stops the start with a message naming the variable. The value is
 * never repeated in the message.
 */
export function parseDeepLinkSettings(env: Env, errors: SettingError[]): DeepLinkTemplates {
  const templates: DeepLinkTemplates = {};
  for (const [destination, prefix] of Object.entries(DEEP_LINK_PREFIXES) as [DeepLinkDestination, string][]) {
    for (const name of Object.keys(env).filter((key) => key.startsWith(prefix))) {
      const raw = env[name]?.trim();
      if (raw === undefined || raw === '') continue;
      const suffix = name.slice(prefix.length);
      const kind = DEEP_LINK_KINDS[KIND_SUFFIXES.indexOf(suffix)];
      if (kind === undefined) {
        errors.push({
          name,
          message: `${name} names no kind of id: the kinds are ${KIND_SUFFIXES.map((k) => prefix + k).join(', ')}`,
        });
        continue;
      }
      const problem = urlTemplateProblem(raw);
      if (problem !== null) {
        errors.push({ name, message: `${name} ${problem} (an http or https URL with {id} where the id goes)` });
        continue;
      }
      templates[kind] = { ...templates[kind], [destination]: raw };
    }
  }
  return templates;
}
