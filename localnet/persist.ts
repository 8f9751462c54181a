// The ledger folder: `genesis.json`, `blocks.jsonl` (one sealed block per line, appended) and `state.bin` (LiteSVM's
// full snapshot, rewritten atomically after every block that changed state). state.bin also carries the block it
// belongs to, so a crash between the two writes is repaired on load: the block is re-appended.
import fs from 'node:fs';
import path from 'node:path';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { LOCALNET_CODES } from '../common/errors/codes';
import { parseLedger, stringifyLedger } from './json';
import type { BlockRecord } from './types';

const MAGIC = Buffer.from('OPLEDG01');

export interface LedgerContents {
  genesisHash: string;
  blocks: BlockRecord[];
  snapshot: Uint8Array | null;
}

export interface LedgerStore {
  dir: string;
  load(): LedgerContents | null;
  init(genesisHash: string): void;
  appendBlock(block: BlockRecord): void;
  writeSnapshot(svmBytes: Uint8Array, block: BlockRecord): void;
  wipe(): void;
  close(): void;
}

export function createLedgerStore(dir: string): LedgerStore {
  const log = logger('localnet.persist');
  const blocksPath = path.join(dir, 'blocks.jsonl');
  const statePath = path.join(dir, 'state.bin');
  const genesisPath = path.join(dir, 'genesis.json');
  let fd: number | null = null;
  fs.mkdirSync(dir, { recursive: true });

  const append = (line: string): void => {
    fd ??= fs.openSync(blocksPath, 'a');
    fs.writeSync(fd, line);
  };

  return {
    dir,
    load() {
      if (!fs.existsSync(genesisPath)) return null;
      const genesisHash = (JSON.parse(fs.readFileSync(genesisPath, 'utf8')) as { genesisHash: string }).genesisHash;
      const text = fs.existsSync(blocksPath) ? fs.readFileSync(blocksPath, 'utf8') : '';
      const lines = text.split('\n');
      const blocks: BlockRecord[] = [];
      let goodBytes = 0;
      for (const line of lines) {
        if (line === '') continue;
        try {
          blocks.push(parseLedger<BlockRecord>(line));
          goodBytes += Buffer.byteLength(line) + 1;
        } catch {
          // A torn last line from a crash mid-append: drop it (its state was never snapshotted after it).
          log.warn({ dir }, 'dropping a torn block line');
          break;
        }
      }
      if (goodBytes !== Buffer.byteLength(text)) fs.truncateSync(blocksPath, goodBytes);
      let snapshot: Uint8Array | null = null;
      if (fs.existsSync(statePath)) {
        const raw = fs.readFileSync(statePath);
        if (raw.length < 12 || !raw.subarray(0, 8).equals(MAGIC)) {
          throw new OncepayError(LOCALNET_CODES.LEDGER_CORRUPT, `${statePath} is not a localnet state file`);
        }
        const n = raw.readUInt32LE(8);
        const head = parseLedger<BlockRecord>(raw.subarray(12, 12 + n).toString('utf8'));
        snapshot = raw.subarray(12 + n);
        const lastSlot = blocks.length ? blocks[blocks.length - 1].slot : -1;
        if (head.slot > lastSlot) {
          append(`${stringifyLedger(head)}\n`);
          blocks.push(head);
        }
        // Blocks with transactions beyond the snapshot cannot be replayed: their effects are not in the state.
        const cut = blocks.findIndex((b) => b.slot > head.slot && b.txs.length > 0);
        if (cut >= 0) {
          log.warn({ dir, slot: blocks[cut].slot }, 'dropping blocks newer than the state snapshot');
          blocks.length = cut;
          fs.writeFileSync(blocksPath, blocks.map((b) => `${stringifyLedger(b)}\n`).join(''));
        }
      }
      return { genesisHash, blocks, snapshot };
    },
    init(genesisHash) {
      fs.writeFileSync(`${genesisPath}.tmp`, JSON.stringify({ genesisHash }));
      fs.renameSync(`${genesisPath}.tmp`, genesisPath);
    },
    appendBlock(block) {
      append(`${stringifyLedger(block)}\n`);
    },
    writeSnapshot(svmBytes, block) {
      const head = Buffer.from(stringifyLedger(block));
      const len = Buffer.alloc(4);
      len.writeUInt32LE(head.length);
      const tmp = `${statePath}.tmp`;
      // Write + rename is atomic against a killed process (what we promise); no fsync, so an OS crash may lose
      // the newest blocks, and fsync per block would throttle fast slot clocks.
      fs.writeFileSync(tmp, Buffer.concat([MAGIC, len, head, Buffer.from(svmBytes)]));
      fs.renameSync(tmp, statePath);
    },
    wipe() {
      if (fd !== null) fs.closeSync(fd);
      fd = null;
      for (const p of [blocksPath, statePath, genesisPath, `${statePath}.tmp`]) fs.rmSync(p, { force: true });
    },
    close() {
      if (fd !== null) fs.closeSync(fd);
      fd = null;
    },
  };
}
