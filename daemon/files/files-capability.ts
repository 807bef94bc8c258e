// The files capability (issue 11): folder grants over /api/grants and the file tools that work inside
// them, and run_command. Checkpoints and the approvals prompt are not part of it yet (docs/files.md).
import { defineCapability } from '../kernel/capability';
import { routes } from '../http/route-kit';
import { fileTools } from './file-tools';
import { GRANT_MIGRATIONS, GrantStore } from './grants';
import { grantRoutes } from './grant-routes';
import { runCommandTool, vaultValues } from './run-command';

export const filesCapability = defineCapability({
  name: 'files',
  create: ({ store, clock, vault }) => {
    const grants = new GrantStore(store, clock);
    return {
      migrations: GRANT_MIGRATIONS,
      routes: [routes(grantRoutes(grants))],
      tools: [...fileTools({ grants: () => grants.active() }), runCommandTool({ grants: () => grants.active(), secrets: () => vaultValues(vault) })],
    };
  },
});
