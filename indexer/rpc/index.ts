export * from './backoff';
export * from './client';
export { RPC_CODES } from '../../common/errors/codes';
