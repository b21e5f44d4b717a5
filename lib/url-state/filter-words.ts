/** What a filter is called on its page and what it takes, for a refusal in words. */
export interface FilterWord {
  label: string;
  /** Completes "<label> must be …". */
  expect: string;
}
export type FilterWords = Readonly<Record<string, FilterWord>>;

export const oneOf = (values: readonly string[]) => `one of ${values.join(', ')}`;
export const INSTANT_WORDS = 'a date like 2026-12-03 or a UTC time like 2026-12-03T10:00:00Z';
export const CURSOR_WORD: FilterWord = {
  label: 'The page position',
  expect: 'a link Keel made; start again from the first page',
};

// zod's own messages ("Invalid input", "Invalid option: expected one of …", "Too big: …")
// name types, not the filter; Keel's own messages are already sentences about the value.
const LIBRARY_MESSAGE = /^(Invalid|Too (big|small)|Unrecognized|Expected)\b/;

/** One sentence for a filter that does not parse: what it is called on the page and what it takes. */
export function filterProblem(words: FilterWords, field: string, message: string): string {
  const word = Object.hasOwn(words, field) ? words[field] : undefined;
  if (LIBRARY_MESSAGE.test(message))
    return word ? `${word.label} must be ${word.expect}.` : `The filter “${field}” is not valid.`;
  // A message that already names the field ("Unknown reason code nope.") stands alone.
  return word && !message.toLowerCase().includes(word.label.toLowerCase()) ? `${word.label}: ${message}` : message;
}

/** The same sentence under the field itself, where its label is already in view. */
export function fieldProblem(words: FilterWords, field: string, message: string): string {
  return LIBRARY_MESSAGE.test(message) ? filterProblem(words, field, message) : message;
}
