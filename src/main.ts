import { ConfigError, parseConfig } from './config.ts';
import { startServer } from './server.ts';

/** Process wiring only: config → server → signals. */
async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const running = await startServer(config);
  console.log(`listening on http://${config.host}:${running.port} (data in ${config.dataDir})`);

  const shutdown = (signal: string): void => {
    console.log(`${signal} received, shutting down`);
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
