/** An orchestration's page: its id is the runtime's free text, so it is encoded as one path segment. */
export const orchestrationHref = (executionId: string) => `/orchestrations/${encodeURIComponent(executionId)}`;

export const LINK = 'text-sky-800 underline dark:text-sky-300';
