import 'server-only';
import { ratesQuerySchema } from '../domain/rates-query';
import { readRates } from '../queries/rates';
import { defineRead } from './define-read';

/** The /rates charts of one range (1 h unless given): rollup counts, sampled levels, audit markers. */
export const rateCharts = defineRead({
  path: '/api/rates',
  permission: 'read',
  search: ratesQuerySchema,
  source: 'list',
  read: (db, { range }) => readRates(db, range ?? '1h'),
});
