import { isFailureCode, MAX_U32, type FailureCode } from './settlement-vocabulary';
import { textProblem } from './text-problem';

// The filter's type and its URL words, without zod: the browser imports these, and the
// schemas that validate them on the server (dead-letter-filter.ts) re-export them.

/**
 * Which dead letters a view or a bulk replay takes (docs/design.md#bulk-replay); every field narrows
 * the set. The dead-letter list, its groups, the queue view (on its own columns) and
 * the bulk replay preview all read this one type, so a preview freezes exactly the rows
 * the list shows for the same fields.
 */
export interface DeadLetterFilter {
  reason?: FailureCode;
  /** Recorded at least this long before the time the filter is applied at. */
  minAgeMs?: number;
  /** Recorded at most this long before the time the filter is applied at. */
  maxAgeMs?: number;
  minAttempts?: number;
  maxAttempts?: number;
  /** Matched literally: `%` and `_` mean themselves. */
  receiptIdPrefix?: string;
  /** Exactly these receipts (a selection on the dead letters page), still dead-lettered when applied. */
  receiptIds?: string[];
}

/** A filter as it arrives at a service boundary, before deadLetterFilterSchema has seen it. */
export type UncheckedDeadLetterFilter = { [K in keyof DeadLetterFilter]?: unknown };

export const RECEIPT_PREFIX_MAX_LENGTH = 256;
/** A selection is what a person ticked on the dead letters page: bounded well below the preview's cap. */
export const MAX_SELECTED_RECEIPTS = 1_000;

const AGE_PATTERN = /^(\d{1,6})(s|m|h|d)$/;
const AGE_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const AGE_FORMAT_MESSAGE = 'An age such as 45s, 30m, 6h or 2d.';

export const isAgeText = (age: string): boolean => AGE_PATTERN.test(age);

/** `30m`, `6h`, `2d`: an age as the URL and the forms write it, in milliseconds. */
export function ageToMs(age: string | undefined): number | undefined {
  const match = age ? AGE_PATTERN.exec(age) : null;
  return match ? Number(match[1]) * AGE_UNIT_MS[match[2] as keyof typeof AGE_UNIT_MS] : undefined;
}

/** The URL's and the forms' words for the filter fields (`q` is the receipt prefix, ages as text). */
export interface DeadLetterFilterWords {
  q?: string;
  reason?: FailureCode;
  minAttempts?: number;
  maxAttempts?: number;
  minAge?: string;
  maxAge?: string;
}

/** Which URL word each filter field is written as, so a filter problem lands on its form field. */
export const FILTER_FIELD_WORD: Record<keyof DeadLetterFilter, keyof DeadLetterFilterWords> = {
  reason: 'reason',
  receiptIdPrefix: 'q',
  minAttempts: 'minAttempts',
  maxAttempts: 'maxAttempts',
  minAgeMs: 'minAge',
  maxAgeMs: 'maxAge',
  // A selection is never written in the URL; a problem with it is shown beside the filter.
  receiptIds: 'q',
};

/** The filter the URL's words say: a bulk replay freezes exactly what the list shows for them. */
export function toDeadLetterFilter(words: DeadLetterFilterWords): DeadLetterFilter {
  const candidate: Record<keyof DeadLetterFilter, unknown> = {
    reason: words.reason || undefined,
    receiptIdPrefix: words.q || undefined,
    minAttempts: words.minAttempts,
    maxAttempts: words.maxAttempts,
    minAgeMs: ageToMs(words.minAge),
    maxAgeMs: ageToMs(words.maxAge),
    receiptIds: undefined, // a selection is never in the URL
  };
  return Object.fromEntries(Object.entries(candidate).filter(([, value]) => value !== undefined)) as DeadLetterFilter;
}

/**
 * The filter the URL's words say when deadLetterFiltersSchema (lib/queries/settlements-types.ts)
 * would accept them, else null: the same rules without zod, for the bulk replay dialog,
 * which must say what it will freeze before the server action checks the words again.
 * test/unit/dead-letter-filter.test.ts holds the two equal.
 */
export function deadLetterFilterOfWords(
  words: { [K in keyof DeadLetterFilterWords]?: string | null },
): DeadLetterFilter | null {
  // An emptied form field or `?reason=` means "any".
  const given = (value: string | null | undefined) => (value === '' || value === null ? undefined : value);
  const attempts = (value: string | null | undefined) => {
    const text = given(value);
    if (text === undefined) return undefined;
    const count = Number(text);
    return Number.isInteger(count) && count >= 0 && count <= MAX_U32 ? count : null;
  };
  const age = (value: string | null | undefined) => {
    const text = given(value)?.trim();
    return text === undefined ? undefined : isAgeText(text) ? text : null;
  };
  const q = given(words.q);
  if (q !== undefined && (textProblem(q) !== null || q.length > RECEIPT_PREFIX_MAX_LENGTH)) return null;
  const code = given(words.reason);
  const reason = code === undefined ? undefined : isFailureCode(code) ? code : null;
  const minAttempts = attempts(words.minAttempts);
  const maxAttempts = attempts(words.maxAttempts);
  const minAge = age(words.minAge);
  const maxAge = age(words.maxAge);
  if (reason === null || minAttempts === null || maxAttempts === null || minAge === null || maxAge === null)
    return null;
  const filter = toDeadLetterFilter({ q, reason, minAttempts, maxAttempts, minAge, maxAge });
  if (filter.minAgeMs !== undefined && filter.maxAgeMs !== undefined && filter.minAgeMs > filter.maxAgeMs) return null;
  if (filter.minAttempts !== undefined && filter.maxAttempts !== undefined && filter.minAttempts > filter.maxAttempts)
    return null;
  return filter;
}
