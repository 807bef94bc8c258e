// The brain's capabilities, in the order they are created and started (daemon/brain.ts): adding one
// is its folder plus one line here (docs/architecture.md, "Adding a capability").
import type { CapabilityDefinition } from './kernel/capability';
import { identityCapability } from './identity/identity-capability';
import { filesCapability } from './files/files-capability';
import { approvalsCapability } from './approvals/approvals-capability';
import { taskflowsCapability } from './taskflows/taskflows-capability';
import { accessCapability } from './access/access-capability';
import { pairingCapability } from './pairing/pairing-capability';
import { meshCapability } from './discovery/discovery-capability';
import { hardwareCapability } from './hardware/hardware-capability';
import { syncCapability } from './sync/sync-capability';
import { publishersCapability } from './publishers/publishers-capability';
import { skillsCapability } from './skills/skills-capability';
import { registryCapability } from './registry/registry-capability';
import { mcpCapability } from './mcp/mcp-capability';

export const CAPABILITIES: readonly CapabilityDefinition[] = [identityCapability, approvalsCapability, filesCapability, taskflowsCapability, accessCapability, pairingCapability, meshCapability, hardwareCapability, syncCapability, publishersCapability, skillsCapability, registryCapability, mcpCapability];
