import { z } from 'zod';
import { OPERATION_ID_PATTERN } from './identifier-patterns';
import { USERNAME_PATTERN } from './new-user-check';
import { can, type Role } from './roles';
import { singleLineText } from './text';

/** The longest text search takes: a receipt id's bound, the longest id Keel shows. */
export const SEARCH_TEXT_MAX_LENGTH = 1_000;
/** The fewest hex digits searched as a retry-key or digest prefix: shorter ones name too much to be an id. */
export const HEX_PREFIX_MIN_LENGTH = 8;

export const searchQuerySchema = z.object({
  q: singleLineText(SEARCH_TEXT_MAX_LENGTH, { min: 1, required: 'Type an id to search for.' }),
});

// Below 2^63 (a bigint column) and within a JavaScript number's exact range.
const NUMERIC_ID = /^0*([1-9][0-9]{0,15})$/;
const HEX = new RegExp(`^[0-9a-fA-F]{${HEX_PREFIX_MIN_LENGTH},64}$`);

/**
 * What a search text may be, kind by kind: each kind of id is looked for only when the
 * text has its shape, so every statement search sends has an index that serves it.
 */
export interface SearchPlan {
  /** An execution, job instance or recovery proposal id. */
  numericId: number | null;
  /** A retry key or evidence digest, or the start of one, in lower case. */
  hexPrefix: string | null;
  operationId: string | null;
  /** Only for a role that may open the users page. */
  username: string | null;
  /** A receipt id or its start, as typed: receipt ids are the runtime's free text. */
  receiptPrefix: string;
}

/** The kinds a trimmed, validated search text is looked for as, for this role. */
export function searchPlan(text: string, role: Role): SearchPlan {
  const numeric = NUMERIC_ID.exec(text);
  const id = numeric ? Number(numeric[1]) : null;
  const lower = text.toLowerCase();
  return {
    numericId: id !== null && Number.isSafeInteger(id) ? id : null,
    hexPrefix: HEX.test(text) ? lower : null,
    operationId: OPERATION_ID_PATTERN.test(text) ? text : null,
    username: can(role, 'manageUsers') && USERNAME_PATTERN.test(lower) ? lower : null,
    receiptPrefix: text,
  };
}
