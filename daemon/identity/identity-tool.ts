// The identity capability's tool: the assistant's own name and persona (SOUL.md) and what USER.md
// says about the user.
import { Type } from '@sinclair/typebox';
import type { IdentitySource } from '../kernel/ports';
import { defineTool, type Tool } from '../kernel/tool';
import { parseSoul, userName } from './identity-text';

export function identityTool(identity: IdentitySource): Tool {
  return defineTool({
    spec: {
      name: 'identity',
      description: "The assistant's own name and persona (SOUL.md) and what USER.md says about the user.",
      parameters: Type.Object({ about: Type.Union([Type.Literal('assistant'), Type.Literal('user')], { description: 'Whose identity to read' }) }),
    },
    safety: 'passive',
    run: async ({ about }) => {
      if (about === 'assistant') {
        const soul = parseSoul(identity.soul());
        return { summary: `I'm ${soul.name}. ${soul.personality}`.trim(), data: soul, sources: ['identity:SOUL.md'] };
      }
      const user = identity.user();
      const name = userName(user);
      return { summary: name ? `You are ${name}.` : "I don't know your name yet: it goes in USER.md (svc setup).", data: { user_md: user }, sources: ['identity:USER.md'] };
    },
  });
}
