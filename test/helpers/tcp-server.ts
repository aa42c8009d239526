import net from 'node:net';

export interface TcpServer {
  server: net.Server;
  port: number;
  /** Stops listening and destroys the connections still open: a scanner's half-finished probe must not hold a test's teardown. */
  close(): Promise<void>;
}

/** A TCP service on 127.0.0.1 for a scanner to find; socket errors are ignored. */
export async function listenTcp(onConnection: (socket: net.Socket) => void): Promise<TcpServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}
