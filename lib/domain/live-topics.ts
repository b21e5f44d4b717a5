import { can, type Permission, type Role } from './roles';
/**
 * The live-update vocabulary, shared by the server's event stream and the pages:
 * the server turns a changed table into one of these topics, and a page refetches
 * only the queries of that topic. A table outside this map sends nothing.
 */
export const LIVE_TOPICS = ['executions', 'proposals', 'settlements', 'audit', 'users', 'webhooks', 'metrics'] as const;
export type LiveTopic = (typeof LIVE_TOPICS)[number];

/** The runtime's and Keel's tables (schema.table, as the NOTIFY trigger names them) and their topic. */
export const TABLE_TOPICS: Readonly<Record<string, LiveTopic>> = {
  'oxide_batch.ob_job_execution': 'executions',
  'keel.recovery_proposal': 'proposals',
  // Orchestration leases are shown beside the proposals that take them over.
  'keel.durable_checkpoint': 'proposals',
  'keel.audit_event': 'audit',
  'keel.user': 'users',
  'keel.webhook_delivery': 'webhooks',
  'keel.bulk_replay': 'settlements',
  'keel.settlement_replay': 'settlements',
  'keel.settlement_event': 'settlements',
  'keel.metric_sample': 'metrics',
  'settle.attempts': 'settlements',
  'settle.dead_letters': 'settlements',
};

export function topicOfTable(table: string): LiveTopic | null {
  return Object.hasOwn(TABLE_TOPICS, table) ? TABLE_TOPICS[table]! : null;
}

export function isLiveTopic(value: unknown): value is LiveTopic {
  return typeof value === 'string' && (LIVE_TOPICS as readonly string[]).includes(value);
}

/**
 * The permission a stream's reader needs to be told of a topic: a change to the users
 * or the webhook deliveries is news only to those who may open those pages.
 */
export const TOPIC_PERMISSIONS: Readonly<Record<LiveTopic, Permission>> = {
  executions: 'read',
  proposals: 'read',
  settlements: 'read',
  audit: 'read',
  users: 'manageUsers',
  webhooks: 'manageWebhooks',
  metrics: 'read',
};

/** Whether a reader of `role` is told of changes to `topic`. */
export const mayHearTopic = (role: Role, topic: LiveTopic): boolean => can(role, TOPIC_PERMISSIONS[topic]);
