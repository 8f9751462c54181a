export { createOutboxWorker, readOutboxStats, replayDeadLetters } from './worker';
export type { OutboxWorker, OutboxWorkerOptions, RoundResult } from './worker';
export { OUTBOX_CODES } from '../../common/errors/codes';
