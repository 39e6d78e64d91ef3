import { ConfigError, logFormatOf, parseConfig, type Config } from './config.ts';
import { listenUrl } from './http/site-origins.ts';
import { ServerLog } from './log/server-log.ts';
import { startServer } from './server.ts';
import { describeProblem } from './storage/problems.ts';

/** Process wiring only: config → log → signals → server. */
function main(): void {
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      new ServerLog(logFormatOf(process.env['LOG_FORMAT'])).error(
        `cannot start: invalid configuration: ${err.problems.join('; ')}`,
        { problems: err.problems },
      );
      process.exit(2);
    }
    throw err;
  }
  const log = new ServerLog(config.logFormat);
  const starting = startServer(config, {
    logError: (err, requestId) => log.fault(err, requestId),
    warn: (message) => log.warn(message),
  });

  // Handlers go in before the server announces itself, so a signal sent the moment
  // "listening" appears is never met by Node's default (exit without cleanup).
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      // A second signal cuts the drain short (Ctrl-C twice); a stop already closing goes on as it was.
      void starting.then((running) => running.close()).catch(() => undefined);
      return;
    }
    stopping = true;
    log.info(`${signal} received, shutting down`);
    if (config.shutdownDrainMs > 0)
      log.info(`draining for ${config.shutdownDrainMs} ms: /healthz answers 503, requests are still served`);
    starting
      .then(async (running) => {
        await running.drain();
        return running.close();
      })
      .then(
        (warnings) => {
          // What a full or read-only disk kept from being saved is said, and the stop is still clean.
          for (const w of warnings) log.warn(w);
          log.info('shutdown complete');
          process.exit(0);
        },
        (err: unknown) => {
          log.fault(err);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  starting.then(
    (running) => {
      log.info(`listening on ${listenUrl(config.host, running.port)} (${running.storage})`);
      if (running.metricsPort !== null)
        log.info(`metrics on ${listenUrl(config.metricsListen?.host ?? '', running.metricsPort)}/metrics`);
    },
    (err: unknown) => {
      // One event that names the file, folder or port and what is wrong with it (README, Run it).
      // A problem may already say it stops the start (pg/connect.ts names the database it waited for).
      const problem = describeProblem(err);
      log.error(problem.startsWith('cannot start: ') ? problem : `cannot start: ${problem}`);
      process.exit(1);
    },
  );
}

main();
