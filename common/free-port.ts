// A TCP port free on loopback right now (the OS picks it), for servers that must be told their port up front.
import * as net from 'net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** `n` TCP ports free on loopback right now, all different (held open together while the OS picks them). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => net.createServer());
  try {
    return await Promise.all(
      servers.map(
        (s) =>
          new Promise<number>((resolve, reject) => {
            s.once('error', reject);
            s.listen(0, '127.0.0.1', () => resolve((s.address() as net.AddressInfo).port));
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(() => r(undefined)))));
  }
}
