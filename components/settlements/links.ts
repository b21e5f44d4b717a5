export { bulkReplayHref, receiptHref } from '@/lib/url-state/settlements';

export const LINK = 'text-sky-800 underline dark:text-sky-300';
