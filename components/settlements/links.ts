/** A receipt's history page. Receipt ids are free text, so they are always encoded. */
export const receiptHref = (receiptId: string) => `/settlements/${encodeURIComponent(receiptId)}`;

export const bulkReplayHref = (jobId: number) => `/settlements/bulk/${jobId}`;

export const LINK = 'text-sky-800 underline dark:text-sky-300';
