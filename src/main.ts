import { ConfigError, parseConfig, type Config } from './config.ts';
import { startServer } from './server.ts';
import { describeProblem } from './store/problems.ts';

/** Process wiring only: config → signals → server. */
function main(): void {
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const starting = startServer(config);

  // Handlers go in before the server announces itself, so a signal sent the moment
  // "listening" appears is never met by Node's default (exit without cleanup).
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return; // a second signal while draining changes nothing
    stopping = true;
    console.log(`${signal} received, shutting down`);
    starting
      .then((running) => running.close())
      .then(
        (warnings) => {
          // What a full or read-only disk kept from being saved is said, and the stop is still clean.
          for (const w of warnings) console.error(`warning: ${w}`);
          console.log('shutdown complete');
          process.exit(0);
        },
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);

  starting.then(
    (running) => console.log(`listening on http://${config.host}:${running.port} (data in ${config.dataDir})`),
    (err: unknown) => {
      // One line that names the file or folder and what is wrong with it (README, Run it).
      console.error(`cannot start: ${describeProblem(err)}`);
      process.exit(1);
    },
  );
}

main();
