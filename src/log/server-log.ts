/**
 * The server's own log on stdout and stderr (README, Server log): one JSON line per event
 * with `time`, `level`, `message` and, for what happened in a request, `request_id`; a
 * fault's stack is a field of its line, never lines of its own. `LOG_FORMAT=pretty` prints
 * the same events for people: time, level, message, then the stack indented.
 */
export type LogFormat = 'json' | 'pretty';
export type Level = 'info' | 'warn' | 'error';

export interface LogSink {
  out(line: string): void;
  err(line: string): void;
}

const STD: LogSink = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
};

/** U+2028 and U+2029 escaped too, so every reader sees one line per event. */
const oneLine = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));

export class ServerLog {
  constructor(
    readonly format: LogFormat = 'json',
    private readonly sink: LogSink = STD,
    private readonly now: () => number = Date.now,
  ) {}

  info(message: string, fields: Record<string, unknown> = {}): void {
    this.#write('info', message, fields);
  }

  warn(message: string, fields: Record<string, unknown> = {}): void {
    this.#write('warn', message, fields);
  }

  error(message: string, fields: Record<string, unknown> = {}): void {
    this.#write('error', message, fields);
  }

  /** An unexpected fault: its message, the request it met (if any), and its stack as a field. */
  fault(err: unknown, requestId?: string): void {
    const fields: Record<string, unknown> = {};
    if (requestId !== undefined) fields['request_id'] = requestId;
    if (err instanceof Error) {
      fields['error'] = err.name;
      if (err.stack !== undefined) fields['stack'] = err.stack;
      this.#write('error', err.message, fields);
    } else this.#write('error', String(err), fields);
  }

  #write(level: Level, message: string, fields: Record<string, unknown>): void {
    const to = level === 'info' ? this.sink.out : this.sink.err;
    if (this.format === 'json') {
      to(oneLine({ time: new Date(this.now()).toISOString(), level, message, ...fields }));
      return;
    }
    const { stack, request_id: id, ...rest } = fields;
    const extra = Object.entries(rest)
      .filter(([k]) => k !== 'error')
      .map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : oneLine(v)}`)
      .join('');
    const tag = id === undefined ? '' : `[${String(id)}] `;
    const head = `${new Date(this.now()).toISOString()} ${level.toUpperCase().padEnd(5)} ${tag}${message}${extra}`;
    // Pretty is for people at a terminal: the stack follows, indented.
    to(
      typeof stack === 'string'
        ? `${head}\n${stack
            .split('\n')
            .slice(1)
            .map((l) => `    ${l.trim()}`)
            .join('\n')}`
        : head,
    );
  }
}
