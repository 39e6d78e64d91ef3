import type { Socket } from 'node:net';

/**
 * Closes a connection whose request body was refused unread, the way nginx's
 * lingering_close does. Destroying a socket with the client's data still unread makes the
 * kernel answer with a RST, which can wipe our 413 from the client's buffers before it
 * reads it. So we send our FIN now and destroy only after `ms` (or when the client closes
 * first): the client has time to read the answer, and unread data costs us nothing,
 * since TCP flow control stops a client that keeps sending.
 */
export function lingerBeforeClose(socket: Socket, ms = 500): void {
  // Node's http server calls destroySoon() after a `Connection: close` response.
  socket.destroySoon = function (this: Socket): void {
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), ms);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}
