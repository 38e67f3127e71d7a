/** JSON logs (pino) for every drainflow process; children carry plan and workflow IDs. */
import { pino, type Logger } from 'pino';

/** Creates the process logger writing JSON lines to stdout. */
export function createLogger(level: string, component: string): Logger {
  return pino({ level, base: { component } });
}
export type { Logger };
