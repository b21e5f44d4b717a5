import { z } from 'zod';
import type { SettingError } from './setting-error';

// The pieces Keel's settings schema (settings.ts) is made of: each setting is a field of one zod
// object over the environment, and the rules between settings run once every field is read.

/** The environment as Keel reads it: names to text. */
export type Env = Record<string, string | undefined>;

/** What a field holds before it is read: the variable's text, or nothing. */
const variable = z.string().optional();

/** A setting's text as given, surrounding white space and all; unset is undefined. */
export const rawSetting = variable;

/** A setting's text, trimmed; unset or blank is undefined. */
export const textSetting = variable.transform((raw) => raw?.trim() || undefined);

/** Trimmed text, or `fallback` when unset or blank. */
export const textSettingOr = (fallback: string) => variable.transform((raw) => raw?.trim() || fallback);

/** A comma-separated list, each entry trimmed, blank entries dropped. */
export const listSetting = variable.transform((raw) =>
  (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean),
);

/** Refuses a field's value with a message naming the variable; the field then reads `fallback`. */
export function refuseSetting<T>(ctx: z.RefinementCtx, message: string, fallback: T): T {
  ctx.addIssue({ code: 'custom', message });
  return fallback;
}

/**
 * Refuses a setting from a rule between settings (or one read by a name made from others, such
 * as an endpoint's secret): the issue names `name`.
 */
export function refuseNamed(ctx: z.RefinementCtx, name: string, message: string): void {
  ctx.addIssue({ code: 'custom', path: [name], message });
}

export interface WholeNumberBound {
  name: string;
  fallback: number;
  min: number;
  max: number;
  /** Said after a refused value: what the setting is and its range. */
  describe: string;
}

/** Reads a whole number within its bounds; unset or blank is the fallback. A refusal names the bound it breaks. */
export function readWholeNumber(raw: string | undefined, bound: WholeNumberBound, ctx: z.RefinementCtx): number {
  const { name, fallback, min, max, describe } = bound;
  const text = raw?.trim();
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) return refuseSetting(ctx, `${name}=${text} is not a whole number (${describe})`, fallback);
  const value = Number(text);
  if (value < min) refuseSetting(ctx, `${name}=${text} is below ${min} (${describe})`, value);
  else if (value > max) refuseSetting(ctx, `${name}=${text} is above ${max} (${describe})`, value);
  return value;
}

/** A whole-number setting within its bounds (readWholeNumber). */
export const wholeNumberSetting = (bound: WholeNumberBound) =>
  variable.transform((raw, ctx) => readWholeNumber(raw, bound, ctx));

/** 1 or true, 0 or false; unset or blank is undefined, for a default that depends on other settings. */
export const flagSetting = (name: string) =>
  variable.transform((raw, ctx): boolean | undefined => {
    const text = raw?.trim();
    if (text === undefined || text === '') return undefined;
    if (text === '1' || text === 'true') return true;
    if (text === '0' || text === 'false') return false;
    return refuseSetting(ctx, `${name}=${text} must be 0 or 1`, undefined);
  });

/**
 * The object schema of a group of settings: its fields, every other variable kept as text for
 * the rules (settings named after an endpoint or a kind), and the rules between the fields, which
 * run even when a field was refused so that one start reports every problem.
 */
export function settingsObject<Shape extends z.ZodRawShape>(
  shape: Shape,
  rules: (fields: z.output<z.ZodObject<Shape>>, ctx: z.RefinementCtx, others: Env) => void,
) {
  return z
    .object(shape)
    .catchall(variable)
    .superRefine((env, ctx) => rules(env as z.output<z.ZodObject<Shape>>, ctx, env as Env), {
      when: (payload) => typeof payload.value === 'object' && payload.value !== null,
    });
}

/** The refusals of a parse as the start reports them: the variable each names, and why. */
export const settingErrorsOf = (error: z.ZodError): SettingError[] =>
  error.issues.map((issue) => ({ name: String(issue.path[0] ?? 'environment'), message: issue.message }));

/**
 * Parses the environment with one group's schema and adds its refusals to `errors`. With a refusal
 * the group's `fallback` is returned; it is not meant to be used, the start stops on the errors.
 */
export function parseSettingGroup<T>(schema: z.ZodType<T>, env: Env, errors: SettingError[], fallback: T): T {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  errors.push(...settingErrorsOf(parsed.error));
  return fallback;
}
