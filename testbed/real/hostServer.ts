// Servers the real-Pulp tests start on the host, at the real node's bridge address (where pods reach the
// host): a free port there, and the wait until the server listens.
import { ChildProcess } from "child_process";
import * as net from "net";
import { NODE_ADDRESS as HOST } from "../local/environment";

/** A port free on the bridge address now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** Resolves once `child` listens on `port`; fails with its log when it exits or does not within 30 s. */
export async function listening(
  name: string,
  port: number,
  child: ChildProcess,
  log: () => string,
): Promise<void> {
  for (const deadline = Date.now() + 30_000; ;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${log()}`);
    const up = await new Promise<boolean>((resolve) =>
      net
        .connect(port, HOST)
        .on("connect", function (this: net.Socket) {
          this.end();
          resolve(true);
        })
        .on("error", () => resolve(false)),
    );
    if (up) return;
    if (Date.now() > deadline) throw new Error(`${name} not listening on ${HOST}:${port} in 30 s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
