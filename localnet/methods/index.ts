// Every JSON-RPC method the localnet answers, by name.
import { accountMethods } from './accounts';
import { blockMethods } from './blocks';
import { clusterMethods } from './cluster';
import type { Handler } from './context';
import { transactionMethods } from './transactions';

export const METHODS: Record<string, Handler> = {
  ...clusterMethods,
  ...blockMethods,
  ...transactionMethods,
  ...accountMethods,
};
