// The route table a brain started with SVC_LOG_LEVEL=debug logs once (daemon/app.ts, msg "routes"):
// what the security tests enumerate, so a new route is covered the day it is registered.
import type { BrainProcess } from './brain-process';

export interface Route {
  method: string;
  url: string;
  public: boolean;
  websocket: boolean;
}

export function routeTable(brain: BrainProcess): Route[] {
  for (const line of brain.lines) {
    const parsed = JSON.parse(line) as { msg?: string; routes?: Route[] };
    if (parsed.msg === 'routes' && parsed.routes) return parsed.routes;
  }
  throw new Error('the brain logged no route table (start it with SVC_LOG_LEVEL=debug)');
}
