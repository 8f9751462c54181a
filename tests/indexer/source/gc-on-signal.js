// Preloaded (`node --expose-gc --require <this>`) into a process under test: on SIGUSR2 it runs a full garbage
// collection and prints the heap in use after it, as one JSON line on stderr. Test-only; never shipped.
'use strict';
process.on('SIGUSR2', () => {
  global.gc();
  global.gc();
  process.stderr.write(`${JSON.stringify({ gcHeapUsed: process.memoryUsage().heapUsed })}\n`);
});
