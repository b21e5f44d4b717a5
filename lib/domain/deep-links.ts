/**
 * Links from a page to the team's own logs and traces for the id it shows: one URL template per
 * kind of id and per destination, set in the environment (docs/configuration.md#logs-and-traces)
 * and checked at start. The template holds `{id}`, which becomes the id, percent-encoded.
 */

export const DEEP_LINK_KINDS = ['execution', 'receipt'] as const;
export type DeepLinkKind = (typeof DEEP_LINK_KINDS)[number];

export const DEEP_LINK_DESTINATIONS = ['logs', 'traces'] as const;
export type DeepLinkDestination = (typeof DEEP_LINK_DESTINATIONS)[number];

/** The templates set, by kind of id then destination; an unset one is absent. */
export type DeepLinkTemplates = Partial<Record<DeepLinkKind, Partial<Record<DeepLinkDestination, string>>>>;

/** The links one page shows for its id: null where no template is set. */
export type DeepLinks = Record<DeepLinkDestination, string | null>;

export const ID_PLACEHOLDER = '{id}';

/** What is wrong with a template, or null when it makes a usable http(s) link for any id. */
export function urlTemplateProblem(template: string): string | null {
  if (!template.includes(ID_PLACEHOLDER)) return `has no ${ID_PLACEHOLDER} placeholder for the id`;
  let url: URL;
  try {
    url = new URL(fillUrlTemplate(template, 'example-id'));
  } catch {
    return 'is not a URL once {id} is filled in';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an http or https URL, not ${url.protocol}`;
  // Every signed-in person sees the link, so it must not carry a password.
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  return null;
}

/** The template with every `{id}` replaced by the id, percent-encoded as one URL component. */
export function fillUrlTemplate(template: string, id: string): string {
  return template.replaceAll(ID_PLACEHOLDER, encodeURIComponent(id));
}

/** The logs and traces links for one id of one kind. */
export function deepLinksFor(templates: DeepLinkTemplates, kind: DeepLinkKind, id: string): DeepLinks {
  const set = templates[kind] ?? {};
  const link = (destination: DeepLinkDestination) => {
    const template = set[destination];
    return template === undefined ? null : fillUrlTemplate(template, id);
  };
  return { logs: link('logs'), traces: link('traces') };
}

export const NO_DEEP_LINKS: DeepLinks = { logs: null, traces: null };
