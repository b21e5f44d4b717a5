// The runtime's bound on an actor reference (docs/design.md#identifiers), apart from the zod schemas in
// identifier-patterns.ts so a client component can check it without loading zod.

export const ACTOR_REF_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;
export const ACTOR_REF_MESSAGE = 'Letters, digits and . _ : @ - (1 to 128).';

export const isActorRef = (value: unknown): value is string =>
  typeof value === 'string' && ACTOR_REF_PATTERN.test(value);
