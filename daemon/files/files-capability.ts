// The files capability (issue 11): folder grants over /api/grants, the file tools that work inside
// them, run_command, and the checkpoints every change and command leaves in $SVC_HOME/checkpoints/
// (docs/files.md, Checkpoints; reverted by `svc checkpoints undo`, which reads index.db itself).
import { defineCapability } from '../kernel/capability';
import { routes } from '../http/route-kit';
import { fileTools } from './file-tools';
import { GRANT_MIGRATIONS, GrantStore } from './grants';
import { grantRoutes } from './grant-routes';
import { runCommandTool, vaultValues } from './run-command';
import { Checkpoints } from './checkpoints';

export const filesCapability = defineCapability({
  name: 'files',
  create: ({ store, clock, vault, home, logger }) => {
    const grants = new GrantStore(store, clock);
    const checkpoints = new Checkpoints({ home, clock, logger });
    return {
      migrations: GRANT_MIGRATIONS,
      routes: [routes(grantRoutes(grants))],
      tools: [...fileTools({ grants: () => grants.active(), checkpoints }), runCommandTool({ grants: () => grants.active(), secrets: () => vaultValues(vault), checkpoints })],
    };
  },
});
