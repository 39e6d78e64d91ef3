import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { single, type Metrics } from './registry.ts';

/** Open file descriptors, from /proc (0 where there is none). */
function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0;
  }
}

/** The soft limit on open files, from /proc/self/limits (0 where there is none). */
function maxFds(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/**
 * The standard process metrics (the names Prometheus client libraries use) and Node's own:
 * CPU, memory, start time, file descriptors, heap, and event-loop lag measured between
 * scrapes. Returns what stops the event-loop monitor.
 */
export function processMetrics(m: Metrics): () => void {
  const lag: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const started = Date.now() / 1000 - process.uptime();
  m.counter('process_cpu_seconds_total', 'User and system CPU time spent, in seconds.', [], () => {
    const u = process.cpuUsage();
    return single((u.user + u.system) / 1e6);
  });
  m.gauge('process_resident_memory_bytes', 'Resident memory size, in bytes.', [], () =>
    single(process.memoryUsage.rss()),
  );
  m.gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch, in seconds.', [], () =>
    single(Math.round(started)),
  );
  m.gauge('process_open_fds', 'Open file descriptors.', [], () => single(openFds()));
  m.gauge('process_max_fds', 'The limit on open file descriptors.', [], () => single(maxFds()));
  m.gauge('nodejs_heap_size_used_bytes', 'V8 heap in use, in bytes.', [], () => single(process.memoryUsage().heapUsed));
  m.gauge('nodejs_heap_size_total_bytes', 'V8 heap reserved, in bytes.', [], () =>
    single(process.memoryUsage().heapTotal),
  );
  m.gauge(
    'nodejs_external_memory_bytes',
    'Memory of buffers and other objects outside the V8 heap, in bytes.',
    [],
    () => single(process.memoryUsage().external),
  );
  m.gauge(
    'nodejs_eventloop_lag_seconds',
    'Event-loop delay since the last scrape: its mean, 99th percentile and max, in seconds.',
    ['stat'],
    () => {
      const out = [
        [['mean'], Number.isNaN(lag.mean) ? 0 : lag.mean / 1e9],
        [['p99'], lag.percentile(99) / 1e9],
        [['max'], lag.max / 1e9],
      ] as const;
      lag.reset();
      return out;
    },
  );
  return () => lag.disable();
}
