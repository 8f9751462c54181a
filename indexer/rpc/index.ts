export * from './backoff';
export * from './client';
export * from './codes';
