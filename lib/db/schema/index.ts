export * from './oxide-batch';
export * from './settle';
export * from './keel';
export * from './auth';
export * from './webhooks';
