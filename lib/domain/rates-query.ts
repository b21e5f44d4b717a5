import { z } from 'zod';
import { RATE_RANGES } from './rates';

/** The /rates page's and GET /api/rates' search params: the range, 1 h unless given. */
export const ratesQuerySchema = z.object({
  range: z
    .union([z.literal(''), z.enum(RATE_RANGES)])
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
});

export type RatesQuery = z.output<typeof ratesQuerySchema>;
