import type { z } from 'zod';
import {
  DEEP_LINK_DESTINATIONS,
  DEEP_LINK_KINDS,
  urlTemplateProblem,
  type DeepLinkDestination,
  type DeepLinkKind,
  type DeepLinkTemplates,
} from '../domain/deep-links';
import type { SettingError } from './setting-error';
import { parseSettingGroup, refuseNamed, refuseSetting, settingsObject, textSetting, type Env } from './setting-schema';

/** The settings' prefix for each destination; the kind follows in capitals (`KEEL_LOG_URL_TEMPLATE_RECEIPT`). */
export const DEEP_LINK_PREFIXES = {
  logs: 'KEEL_LOG_URL_TEMPLATE_',
  traces: 'KEEL_TRACE_URL_TEMPLATE_',
} as const satisfies Record<DeepLinkDestination, string>;

/** `KEEL_LOG_URL_TEMPLATE_RECEIPT` and the others: one variable per destination and kind of id. */
type DeepLinkVariable = `${(typeof DEEP_LINK_PREFIXES)[DeepLinkDestination]}${Uppercase<DeepLinkKind>}`;

const KIND_SUFFIXES = DEEP_LINK_KINDS.map((kind) => kind.toUpperCase());

const variableName = (destination: DeepLinkDestination, kind: DeepLinkKind) =>
  `${DEEP_LINK_PREFIXES[destination]}${kind.toUpperCase()}` as DeepLinkVariable;

/** One template: an http(s) URL holding `{id}`. The refusal names the variable, never the value. */
const templateSetting = (name: string) =>
  textSetting.transform((template, ctx) => {
    const problem = template === undefined ? null : urlTemplateProblem(template);
    if (problem === null) return template;
    return refuseSetting(ctx, `${name} ${problem} (an http or https URL with {id} where the id goes)`, undefined);
  });

/**
 * The deep link fields of the settings schema (lib/config/settings.ts): `KEEL_LOG_URL_TEMPLATE_<KIND>` and
 * `KEEL_TRACE_URL_TEMPLATE_<KIND>` (docs/configuration.md#logs-and-traces), one per destination and kind of id.
 */
export const deepLinkFields = Object.fromEntries(
  DEEP_LINK_DESTINATIONS.flatMap((destination) =>
    DEEP_LINK_KINDS.map((kind) => {
      const name = variableName(destination, kind);
      return [name, templateSetting(name)];
    }),
  ),
) as Record<DeepLinkVariable, ReturnType<typeof templateSetting>>;

export type DeepLinkFields = z.output<z.ZodObject<typeof deepLinkFields>>;

/** A setting under either prefix that names no kind is a typo: it stops the start too. */
export function deepLinkRules(_fields: DeepLinkFields, ctx: z.RefinementCtx, env: Env): void {
  for (const prefix of Object.values(DEEP_LINK_PREFIXES)) {
    for (const name of Object.keys(env).filter((key) => key.startsWith(prefix))) {
      if (!env[name]?.trim() || KIND_SUFFIXES.includes(name.slice(prefix.length))) continue;
      const kinds = KIND_SUFFIXES.map((kind) => prefix + kind).join(', ');
      refuseNamed(ctx, name, `${name} names no kind of id: the kinds are ${kinds}`);
    }
  }
}

/** The templates set, by kind of id then destination. */
export function toDeepLinkTemplates(fields: DeepLinkFields): DeepLinkTemplates {
  const templates: DeepLinkTemplates = {};
  for (const destination of DEEP_LINK_DESTINATIONS) {
    for (const kind of DEEP_LINK_KINDS) {
      const template = fields[variableName(destination, kind)];
      if (template !== undefined) templates[kind] = { ...templates[kind], [destination]: template };
    }
  }
  return templates;
}

const deepLinkSettingsSchema = settingsObject(deepLinkFields, deepLinkRules).transform(toDeepLinkTemplates);

/** The deep link settings alone, by the same fields and rules as the whole schema; refusals go to `errors`. */
export function parseDeepLinkSettings(env: Env, errors: SettingError[]): DeepLinkTemplates {
  return parseSettingGroup(deepLinkSettingsSchema, env, errors, {});
}
